#ifndef CALC_H
#define CALC_H
typedef struct { const char *text; int pos; } Lexer;
long parse_expression(Lexer *lexer);
long apply(char op, long lhs, long rhs);
int skip_spaces(const char *text, int pos);
int table_set(const char *name, long value);
long table_get(const char *name, long fallback);
long table_add(const char *name, long delta);
long table_sum(void);
long table_max(void);
#endif
