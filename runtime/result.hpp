#pragma once

// Errors as values for plain (actor-free) code: `result<T>` holds a T or an `error`. Actors turn
// an `error` into a caf::error at their boundary (runtime/actor/caf_error.hpp); no exception
// crosses an actor or the kj loop.

#include <cassert>
#include <string>
#include <utility>
#include <variant>

#include "runtime/errc.hpp"

namespace capstan {

struct error {
  errc code = errc::none;
  std::string message;

  // "CORRUPT_MESSAGE: crc mismatch ..."
  std::string to_string() const;
};

inline error make_error(errc code, std::string message) { return error{code, std::move(message)}; }

template <class T>
class [[nodiscard]] result {
public:
  result(T value) : v_(std::move(value)) {}
  result(error e) : v_(std::move(e)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  // REQUIRES: ok()
  T& value() & { assert(ok()); return std::get<0>(v_); }
  const T& value() const& { assert(ok()); return std::get<0>(v_); }
  T&& value() && { assert(ok()); return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  // REQUIRES: !ok()
  const error& err() const { assert(!ok()); return std::get<1>(v_); }
  errc code() const { return ok() ? errc::none : err().code; }

private:
  std::variant<T, error> v_;
};

// A result that carries no value: success or an error.
class [[nodiscard]] status {
public:
  status() = default;
  status(error e) : err_(std::move(e)) {}

  bool ok() const { return err_.code == errc::none; }
  explicit operator bool() const { return ok(); }
  const error& err() const { return err_; }
  errc code() const { return err_.code; }

private:
  error err_;
};

} // namespace capstan
