// The runtime's internal error: a result code for the C API and a message for people.
#pragma once

#include <stdexcept>
#include <string>

#include "bridge/include/nbox_host.h"

namespace nbox::host {

class HostError : public std::runtime_error {
 public:
  HostError(nboxResult_t code, const std::string& what) : std::runtime_error(what), code_(code) {}
  nboxResult_t code() const { return code_; }

 private:
  nboxResult_t code_;
};

}  // namespace nbox::host
