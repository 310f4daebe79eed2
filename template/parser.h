// Tokens -> syntax tree, following the reference renderer's grammar and
// operator precedence. Errors name the construct and the line.
#pragma once
#include <string_view>
#include <vector>

#include "template/ast.h"
#include "template/lexer.h"

namespace edgellm::tmpl {

constexpr int kMaxTreeDepth = 256;  // nesting of blocks and expressions

// Throws edgellm::Error "NAME, line N: syntax error: ...".
NodePtr parse(const std::vector<Token>& tokens, std::string_view name);

}  // namespace edgellm::tmpl
