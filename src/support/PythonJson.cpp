#include "mlgo/support/PythonJson.h"

#include <cstdio>
#include <cstring>
#include <functional>

namespace mlgo {
namespace {

void appendEscapedCodeUnit(std::string &out, unsigned unit) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "\\u%04x", unit);
  out += buf;
}

void appendCodePoint(std::string &out, uint32_t cp) {
  switch (cp) {
  case '"':
    out += "\\\"";
    return;
  case '\\':
    out += "\\\\";
    return;
  case '\n':
    out += "\\n";
    return;
  case '\r':
    out += "\\r";
    return;
  case '\t':
    out += "\\t";
    return;
  case '\b':
    out += "\\b";
    return;
  case '\f':
    out += "\\f";
    return;
  default:
    break;
  }
  if (cp >= 0x20 && cp < 0x7f) {
    out += static_cast<char>(cp);
  } else if (cp < 0x10000) {
    appendEscapedCodeUnit(out, cp);
  } else {
    uint32_t v = cp - 0x10000;
    appendEscapedCodeUnit(out, 0xd800 + (v >> 10));
    appendEscapedCodeUnit(out, 0xdc00 + (v & 0x3ff));
  }
}

// Decodes one UTF-8 sequence at `s[i]` with Python's strict rules (no
// overlongs, no encoded surrogates, nothing above U+10FFFF). Returns the
// sequence length, or 0 when the byte at `i` does not start a valid one.
size_t decodeUtf8(llvm::StringRef s, size_t i, uint32_t &cp) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char b0 = byte(i);
  if (b0 < 0x80) {
    cp = b0;
    return 1;
  }
  size_t len;
  uint32_t min;
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    len = 2, cp = b0 & 0x1f, min = 0x80;
  } else if (b0 >= 0xe0 && b0 <= 0xef) {
    len = 3, cp = b0 & 0x0f, min = 0x800;
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    len = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + len > s.size())
    return 0;
  for (size_t k = 1; k < len; ++k) {
    unsigned char b = byte(i + k);
    if ((b & 0xc0) != 0x80)
      return 0;
    cp = (cp << 6) | (b & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
    return 0;
  return len;
}

void dumpValue(std::string &out, const nlohmann::ordered_json &value, int depth) {
  auto indent = [&](int d) { out.append(static_cast<size_t>(d) * 2, ' '); };
  switch (value.type()) {
  case nlohmann::json::value_t::object: {
    if (value.empty()) {
      out += "{}";
      return;
    }
    out += "{\n";
    bool first = true;
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (!first)
        out += ",\n";
      first = false;
      indent(depth + 1);
      appendPythonJsonString(out, it.key());
      out += ": ";
      dumpValue(out, it.value(), depth + 1);
    }
    out += "\n";
    indent(depth);
    out += "}";
    return;
  }
  case nlohmann::json::value_t::array: {
    if (value.empty()) {
      out += "[]";
      return;
    }
    out += "[\n";
    bool first = true;
    for (const auto &element : value) {
      if (!first)
        out += ",\n";
      first = false;
      indent(depth + 1);
      dumpValue(out, element, depth + 1);
    }
    out += "\n";
    indent(depth);
    out += "]";
    return;
  }
  case nlohmann::json::value_t::string:
    appendPythonJsonString(out, value.get_ref<const std::string &>());
    return;
  default:
    // Numbers, booleans and null print the same in both languages.
    out += value.dump();
    return;
  }
}

} // namespace

void appendPythonJsonString(std::string &out, llvm::StringRef bytes) {
  out += '"';
  for (size_t i = 0; i < bytes.size();) {
    uint32_t cp;
    size_t len = decodeUtf8(bytes, i, cp);
    if (len == 0) {
      appendEscapedCodeUnit(out, 0xdc00 + static_cast<unsigned char>(bytes[i]));
      ++i;
      continue;
    }
    appendCodePoint(out, cp);
    i += len;
  }
  out += '"';
}

std::string dumpPythonJson(const nlohmann::ordered_json &value) {
  std::string out;
  dumpValue(out, value, 0);
  return out;
}

nlohmann::ordered_json parsePythonJson(llvm::StringRef text) {
  // nlohmann rejects lone surrogates, so Python's surrogateescape escapes are
  // swapped for a private marker, decoded, and swapped back to raw bytes. The
  // marker is U+FFFF (a noncharacter) plus a tag: "b" and two hex digits for
  // an escaped byte, "u" for a U+FFFF the text itself holds (raw or \uffff),
  // so that every U+FFFF after decoding is a marker and none is misread.
  static constexpr char Marker[] = "\xef\xbf\xbf";
  std::string rewritten;
  rewritten.reserve(text.size());
  bool sawMarker = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (text.substr(i).starts_with(Marker)) {
      rewritten += Marker;
      rewritten += 'u';
      sawMarker = true;
      i += 2;
      continue;
    }
    if (c == '\\' && i + 1 < text.size()) {
      bool previousIsHighSurrogate = rewritten.size() >= 6 &&
                                     llvm::StringRef(rewritten).take_back(6).starts_with_insensitive("\\ud") &&
                                     std::strchr("89abAB", rewritten[rewritten.size() - 3]) != nullptr;
      if (text[i + 1] == 'u' && i + 5 < text.size() && text.substr(i + 2, 4).equals_insensitive("ffff")) {
        rewritten += Marker;
        rewritten += 'u';
        sawMarker = true;
        i += 5;
        continue;
      }
      if (text[i + 1] == 'u' && i + 5 < text.size() &&
          llvm::StringRef(text.substr(i + 2, 2)).equals_insensitive("dc") && !previousIsHighSurrogate) {
        unsigned value;
        if (!text.substr(i + 4, 2).getAsInteger(16, value) && value >= 0x80) {
          rewritten += Marker;
          rewritten += 'b';
          rewritten += text.substr(i + 4, 2).str();
          sawMarker = true;
          i += 5;
          continue;
        }
      }
      rewritten += c;
      rewritten += text[i + 1];
      ++i;
      continue;
    }
    rewritten += c;
  }
  nlohmann::ordered_json parsed = nlohmann::ordered_json::parse(rewritten);
  if (!sawMarker)
    return parsed;
  auto restore = [](std::string &s) {
    std::string out;
    size_t pos = 0, found;
    while ((found = s.find(Marker, pos)) != std::string::npos) {
      out.append(s, pos, found - pos);
      if (s.compare(found + 3, 1, "u") == 0) {
        out += Marker;
        pos = found + 4;
      } else { // "b" and two hex digits, as written above
        out += static_cast<char>(std::stoi(s.substr(found + 4, 2), nullptr, 16));
        pos = found + 6;
      }
    }
    out.append(s, pos);
    s = std::move(out);
  };
  std::function<void(nlohmann::ordered_json &)> walk = [&](nlohmann::ordered_json &v) {
    if (v.is_string()) {
      restore(v.get_ref<std::string &>());
    } else if (v.is_array()) {
      for (auto &e : v)
        walk(e);
    } else if (v.is_object()) {
      nlohmann::ordered_json rebuilt = nlohmann::ordered_json::object();
      for (auto it = v.begin(); it != v.end(); ++it) {
        std::string key = it.key();
        restore(key);
        walk(it.value());
        rebuilt[key] = std::move(it.value());
      }
      v = std::move(rebuilt);
    }
  };
  walk(parsed);
  return parsed;
}

} // namespace mlgo
