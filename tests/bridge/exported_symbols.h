// What `nm -D --defined-only` says a shared library exports, i.e. what NCCL's dlsym can find.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <set>
#include <string>

namespace nbox::bridge::testing {

// Exported symbol name -> nm's type letter. Empty when nm cannot run.
inline std::map<std::string, char> ExportedSymbols(const std::string& library_path) {
  std::map<std::string, char> symbols;
  const std::string command = "nm -D --defined-only '" + library_path + "'";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return symbols;
  char line[512];
  while (fgets(line, sizeof(line), pipe) != nullptr) {
    char address[64], type, name[400];
    if (sscanf(line, "%63s %c %399s", address, &type, name) == 3) symbols[name] = type;
  }
  pclose(pipe);
  return symbols;
}

// Success when the library exports exactly `expected`, each as data (initialised 'D' or BSS
// 'B': what a plugin table must be for dlsym to return it).
inline ::testing::AssertionResult ExportsExactlyTheseData(const std::string& library_path,
                                                          const std::set<std::string>& expected) {
  const std::map<std::string, char> symbols = ExportedSymbols(library_path);
  std::set<std::string> names;
  for (const auto& [name, type] : symbols) {
    if (type != 'D' && type != 'B') {
      return ::testing::AssertionFailure() << name << " has nm type " << type << ", not data";
    }
    names.insert(name);
  }
  if (names == expected) return ::testing::AssertionSuccess();
  auto failure = ::testing::AssertionFailure() << library_path << " exports";
  for (const std::string& name : names) failure << " " << name;
  failure << "; expected";
  for (const std::string& name : expected) failure << " " << name;
  return failure;
}

}  // namespace nbox::bridge::testing
