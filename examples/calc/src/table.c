// A small symbol table with statistics: several helpers called from many
// places, so an -Oz build leaves the inliner real choices to make.
#include "calc.h"

#include <string.h>

#define TABLE_SIZE 64

typedef struct {
  char name[16];
  long value;
  int used;
} Entry;

static Entry table[TABLE_SIZE];

static unsigned hash(const char *name) {
  unsigned h = 2166136261u;
  for (; *name; ++name)
    h = (h ^ (unsigned char)*name) * 16777619u;
  return h;
}

static Entry *slot(const char *name) {
  unsigned start = hash(name) % TABLE_SIZE;
  for (unsigned probe = 0; probe < TABLE_SIZE; ++probe) {
    Entry *e = &table[(start + probe) % TABLE_SIZE];
    if (!e->used || strncmp(e->name, name, sizeof e->name) == 0)
      return e;
  }
  return 0;
}

static long clamp(long v, long lo, long hi) { return v < lo ? lo : v > hi ? hi : v; }

static int valid_name(const char *name) {
  size_t n = strlen(name);
  return n > 0 && n < sizeof table[0].name;
}

int table_set(const char *name, long value) {
  if (!valid_name(name))
    return 0;
  Entry *e = slot(name);
  if (!e)
    return 0;
  strncpy(e->name, name, sizeof e->name - 1);
  e->value = clamp(value, -1000000, 1000000);
  e->used = 1;
  return 1;
}

long table_get(const char *name, long fallback) {
  if (!valid_name(name))
    return fallback;
  Entry *e = slot(name);
  return e && e->used ? e->value : fallback;
}

long table_add(const char *name, long delta) {
  long v = clamp(table_get(name, 0) + delta, -1000000, 1000000);
  table_set(name, v);
  return v;
}

long table_sum(void) {
  long sum = 0;
  for (int i = 0; i < TABLE_SIZE; ++i)
    if (table[i].used)
      sum = clamp(sum + table[i].value, -1000000, 1000000);
  return sum;
}

long table_max(void) {
  long best = 0;
  int seen = 0;
  for (int i = 0; i < TABLE_SIZE; ++i)
    if (table[i].used && (!seen || table[i].value > best)) {
      best = clamp(table[i].value, -1000000, 1000000);
      seen = 1;
    }
  return best;
}
