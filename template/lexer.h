// Template source -> tokens, with the reference renderer's whitespace rules:
// trim_blocks and lstrip_blocks on, one trailing newline dropped, `{%-`/`-%}`
// and friends strip, and transformers' {% generation %} tags removed.
// Every token carries the line of the original source it came from.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace edgellm::tmpl {

enum class Tok : uint8_t {
  Text, NumericLiteral, StringLiteral, Identifier, Equals, OpenParen, CloseParen,
  OpenStatement, CloseStatement, OpenExpression, CloseExpression, OpenSquareBracket,
  CloseSquareBracket, OpenCurlyBracket, CloseCurlyBracket, Comma, Dot, Colon, Pipe,
  AdditiveBinaryOperator, MultiplicativeBinaryOperator, ExponentiationBinaryOperator,
  ComparisonBinaryOperator, UnaryOperator, Comment, End
};
const char* tok_name(Tok t);

struct Token {
  Tok type;
  std::string value;
  int line;
};

// Throws edgellm::Error "NAME, line N: ..." on a lexical error.
std::vector<Token> tokenize(std::string_view source, std::string_view name);

}  // namespace edgellm::tmpl
