#pragma once
// The error contract every izwi command line shares: failures go to stderr as
// "<program>: <what>" (with the izwi error kind when there is one) and exit with code 1.

#include <exception>
#include <iostream>

#include "izwi/errors.h"

namespace izwi::cli {

/// Runs `body` (returning the exit code) and turns any exception into the error contract.
template <typename Body>
int run_main(const char* program, Body&& body) {
  try {
    return body();
  } catch (const izwi::Error& e) {
    std::cerr << program << ": " << izwi::to_string(e.code()) << ": " << e.what() << "\n";
  } catch (const std::exception& e) {
    std::cerr << program << ": " << e.what() << "\n";
  }
  return 1;
}

}  // namespace izwi::cli
