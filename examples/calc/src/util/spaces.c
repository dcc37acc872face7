#include "calc.h"

int skip_spaces(const char *text, int pos) {
  while (text[pos] == ' ' || text[pos] == '\t')
    ++pos;
  return pos;
}
