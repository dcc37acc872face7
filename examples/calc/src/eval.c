#include "calc.h"

long apply(char op, long lhs, long rhs) {
  switch (op) {
  case '+': return lhs + rhs;
  case '-': return lhs - rhs;
  case '*': return lhs * rhs;
  case '/': return rhs ? lhs / rhs : 0;
  }
  return 0;
}
