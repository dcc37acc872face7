#include "calc.h"

static long parse_number(Lexer *lexer) {
  long value = 0;
  lexer->pos = skip_spaces(lexer->text, lexer->pos);
  while (lexer->text[lexer->pos] >= '0' && lexer->text[lexer->pos] <= '9')
    value = value * 10 + (lexer->text[lexer->pos++] - '0');
  return value;
}

static long parse_term(Lexer *lexer) {
  long value = parse_number(lexer);
  for (;;) {
    lexer->pos = skip_spaces(lexer->text, lexer->pos);
    char op = lexer->text[lexer->pos];
    if (op != '*' && op != '/')
      return value;
    lexer->pos++;
    value = apply(op, value, parse_number(lexer));
  }
}

long parse_expression(Lexer *lexer) {
  long value = parse_term(lexer);
  for (;;) {
    lexer->pos = skip_spaces(lexer->text, lexer->pos);
    char op = lexer->text[lexer->pos];
    if (op != '+' && op != '-')
      return value;
    lexer->pos++;
    value = apply(op, value, parse_term(lexer));
  }
}
