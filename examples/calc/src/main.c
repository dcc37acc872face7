#include "calc.h"
#include <stdio.h>

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    Lexer lexer = {argv[i], 0};
    long value = parse_expression(&lexer);
    printf("%s = %ld\n", argv[i], value);
    table_set(argv[i], value);
    table_add("total", value);
  }
  printf("sum %ld, max %ld, total %ld\n", table_sum(), table_max(), table_get("total", 0));
  return 0;
}
