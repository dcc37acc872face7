#include "calc.h"
#include <stdio.h>

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    Lexer lexer = {argv[i], 0};
    printf("%s = %ld\n", argv[i], parse_expression(&lexer));
  }
  return 0;
}
