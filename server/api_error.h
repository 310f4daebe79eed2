// An error a request earns, in OpenAI's shape: the HTTP status plus the
// {"error": {"message", "type", "param", "code"}} object every OpenAI client
// parses. Request handling throws it; the HTTP layer turns it into the
// response (or, mid-stream, into a final SSE error event).
#pragma once
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace edgellm::server {

struct ApiError : std::runtime_error {
  int status;
  std::string type, param, code;
  ApiError(int status, std::string message, std::string param = "", std::string type = "", std::string code = "")
      : std::runtime_error(std::move(message)),
        status(status),
        type(type.empty() ? default_type(status) : std::move(type)),
        param(std::move(param)),
        code(std::move(code)) {}

  static std::string default_type(int status) {
    switch (status) {
      case 401: return "authentication_error";
      case 403: return "permission_error";
      case 404: return "not_found_error";
      case 429: return "rate_limit_error";
      case 503: return "unavailable_error";
      default: return status >= 500 ? "server_error" : "invalid_request_error";
    }
  }
  nlohmann::json body() const {
    return {{"error",
             {{"message", what()},
              {"type", type},
              {"param", param.empty() ? nlohmann::json(nullptr) : nlohmann::json(param)},
              {"code", code.empty() ? nlohmann::json(nullptr) : nlohmann::json(code)}}}};
  }
};

// A 400 naming the field at fault.
[[noreturn]] inline void bad_field(const std::string& field, const std::string& what) {
  throw ApiError(400, "'" + field + "' " + what, field);
}

}  // namespace edgellm::server
