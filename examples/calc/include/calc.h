#ifndef CALC_H
#define CALC_H
typedef struct { const char *text; int pos; } Lexer;
long parse_expression(Lexer *lexer);
long apply(char op, long lhs, long rhs);
int skip_spaces(const char *text, int pos);
#endif
