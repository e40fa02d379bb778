// The kinds of value a scenario key can hold: how text becomes a typed field of Scenario,
// what is expected (for docs and errors), and how the field is written back as text.
//
// Each factory takes the field (as section and member pointers) and its allowed range, and
// derives the "expected" sentence from that range, so what the docs promise and what the
// parser checks are one thing.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tools/cosim/scenario/scenario.h"
#include "tools/cosim/scenario/value_text.h"

namespace nbox::scenario {

struct ValueKind {
  // What a valid value looks like: "a whole number of bytes from 576 to 9216".
  std::string expected;
  // Sets the field from `text`; false (field untouched) when the text is not as expected.
  std::function<bool(std::string_view text, Scenario& scenario)> parse;
  // The field's value as text that `parse` reads back to the same value.
  std::function<std::string(const Scenario& scenario)> format;
  // The names a value may take, when it is one of a few (for "did you mean").
  std::vector<std::string> choices;
  // A key that may be given more than once (in the file and by --set): each value adds to
  // what the earlier ones set, and `format` writes them all in one text `parse` reads back.
  bool repeatable = false;
};

// A member of a member of Scenario: FieldOf(&Scenario::network, &NetworkSection::mtu).
template <typename Section, typename T>
struct Field {
  Section Scenario::*section;
  T Section::*member;
  T& In(Scenario& scenario) const { return scenario.*section.*member; }
  const T& In(const Scenario& scenario) const { return scenario.*section.*member; }
};

template <typename Section, typename T>
Field<Section, T> FieldOf(Section Scenario::*section, T Section::*member) {
  return {section, member};
}

// Readers: the value of `text`, or nothing when it is not of the kind. No range checks.
std::optional<uint64_t> ReadWholeNumber(std::string_view text);  // digits only
std::optional<double> ReadReal(std::string_view text);           // "0.4", "2", "1e-3"
std::optional<bool> ReadSwitch(std::string_view text);           // on/off, true/false, ...
std::optional<uint64_t> ReadBytes(std::string_view text);
std::optional<uint64_t> ReadCount(std::string_view text);
std::optional<double> ReadRate(std::string_view text);
std::optional<double> ReadDuration(std::string_view text);
std::optional<double> ReadFlopRate(std::string_view text);
std::optional<double> ReadFlopCount(std::string_view text);

// "one of a, b, c" or, for a single choice, just it.
std::string ChoicesSentence(const std::vector<std::string>& choices);

// The kind for `field` whose text is read by `read`, must lie in [min, max] (min excluded if
// `min_excluded`), and is written by `write`.
template <typename Section, typename T, typename Raw>
ValueKind RangedKind(Field<Section, T> field, std::string expected,
                     std::optional<Raw> (*read)(std::string_view), std::string (*write)(Raw),
                     Raw min, Raw max, bool min_excluded = false) {
  ValueKind kind;
  kind.expected = std::move(expected);
  kind.parse = [=](std::string_view text, Scenario& scenario) {
    const std::optional<Raw> value = read(text);
    if (!value || *value > max || *value < min || (min_excluded && *value == min)) return false;
    field.In(scenario) = static_cast<T>(*value);
    return true;
  };
  kind.format = [=](const Scenario& scenario) {
    return write(static_cast<Raw>(field.In(scenario)));
  };
  return kind;
}

template <typename Section, typename T>
ValueKind WholeNumber(Field<Section, T> field, uint64_t min, uint64_t max) {
  return RangedKind<Section, T, uint64_t>(
      field, "a whole number from " + WholeNumberText(min) + " to " + WholeNumberText(max),
      ReadWholeNumber, WholeNumberText, min, max);
}

// `auto` (stored as 0: the program decides) or a whole number in [min, max] (min >= 1).
template <typename Section, typename T>
ValueKind WholeNumberOrAuto(Field<Section, T> field, uint64_t min, uint64_t max) {
  ValueKind kind;
  kind.expected =
      "auto or a whole number from " + WholeNumberText(min) + " to " + WholeNumberText(max);
  kind.parse = [=](std::string_view text, Scenario& scenario) {
    if (text == "auto") {
      field.In(scenario) = 0;
      return true;
    }
    const std::optional<uint64_t> value = ReadWholeNumber(text);
    if (!value || *value < min || *value > max) return false;
    field.In(scenario) = static_cast<T>(*value);
    return true;
  };
  kind.format = [=](const Scenario& scenario) {
    const auto value = static_cast<uint64_t>(field.In(scenario));
    return value == 0 ? std::string("auto") : WholeNumberText(value);
  };
  return kind;
}

template <typename Section, typename T>
ValueKind Bytes(Field<Section, T> field, uint64_t min, uint64_t max) {
  return RangedKind<Section, T, uint64_t>(
      field, "a whole number of bytes from " + BytesText(min) + " to " + BytesText(max), ReadBytes,
      BytesText, min, max);
}

template <typename Section>
ValueKind Count(Field<Section, uint64_t> field, uint64_t min, uint64_t max) {
  return RangedKind<Section, uint64_t, uint64_t>(
      field, "a count from " + CountText(min) + " to " + CountText(max) + ", such as 60.2M or 1.5B",
      ReadCount, CountText, min, max);
}

template <typename Section>
ValueKind Rate(Field<Section, double> field, double min, double max) {
  return RangedKind<Section, double, double>(
      field,
      "a rate from " + RateText(min) + " to " + RateText(max) + ", such as 100Gbps or 25Gb/s",
      ReadRate, RateText, min, max);
}

template <typename Section>
ValueKind Duration(Field<Section, double> field, double min, double max) {
  return RangedKind<Section, double, double>(field,
                                             "a duration from " + DurationText(min) + " to " +
                                                 DurationText(max) + ", such as 1us or 2.5ms",
                                             ReadDuration, DurationText, min, max);
}

template <typename Section>
ValueKind FlopRate(Field<Section, double> field, double min, double max) {
  return RangedKind<Section, double, double>(field,
                                             "a FLOP rate from " + FlopRateText(min) + " to " +
                                                 FlopRateText(max) +
                                                 ", such as 125TFLOPS or 19.5TFLOPS",
                                             ReadFlopRate, FlopRateText, min, max);
}

template <typename Section>
ValueKind FlopCount(Field<Section, double> field, double min, double max) {
  return RangedKind<Section, double, double>(field,
                                             "a FLOP count from " + FlopCountText(min) + " to " +
                                                 FlopCountText(max) + ", such as 11.3GFLOP or 4e9",
                                             ReadFlopCount, FlopCountText, min, max);
}

// A plain number in [min, max], or (min, max] when `min_excluded`.
template <typename Section>
ValueKind Real(Field<Section, double> field, double min, double max, bool min_excluded = false) {
  std::string expected =
      min_excluded ? "a number greater than " + RealText(min) + " and at most " + RealText(max)
                   : "a number from " + RealText(min) + " to " + RealText(max);
  return RangedKind<Section, double, double>(field, std::move(expected), ReadReal, RealText, min,
                                             max, min_excluded);
}

template <typename Section>
ValueKind Choice(Field<Section, std::string> field, std::vector<std::string> choices) {
  ValueKind kind;
  kind.expected = ChoicesSentence(choices);
  kind.choices = choices;
  kind.parse = [=](std::string_view text, Scenario& scenario) {
    for (const std::string& choice : choices) {
      if (choice == text) {
        field.In(scenario) = choice;
        return true;
      }
    }
    return false;
  };
  kind.format = [=](const Scenario& scenario) { return field.In(scenario); };
  return kind;
}

// One of a few named values of an enum, each with its spelling.
template <typename Section, typename E>
ValueKind EnumChoice(Field<Section, E> field, std::vector<std::pair<E, std::string>> choices) {
  ValueKind kind;
  for (const auto& [value, spelling] : choices) kind.choices.push_back(spelling);
  kind.expected = ChoicesSentence(kind.choices);
  kind.parse = [=](std::string_view text, Scenario& scenario) {
    for (const auto& [value, spelling] : choices) {
      if (spelling != text) continue;
      field.In(scenario) = value;
      return true;
    }
    return false;
  };
  kind.format = [=](const Scenario& scenario) {
    for (const auto& [value, spelling] : choices) {
      if (value == field.In(scenario)) return spelling;
    }
    return std::string("?");
  };
  return kind;
}

template <typename Section>
ValueKind Switch(Field<Section, bool> field) {
  ValueKind kind;
  kind.expected = "on or off (also true/false, yes/no, 1/0)";
  kind.parse = [=](std::string_view text, Scenario& scenario) {
    const std::optional<bool> value = ReadSwitch(text);
    if (value) field.In(scenario) = *value;
    return value.has_value();
  };
  kind.format = [=](const Scenario& scenario) {
    return std::string(field.In(scenario) ? "on" : "off");
  };
  return kind;
}

// `auto` (nothing set: the setting's default, which may depend on other keys) or a switch.
template <typename Section>
ValueKind AutoSwitch(Field<Section, std::optional<bool>> field) {
  ValueKind kind;
  kind.expected = "auto, on or off (also true/false, yes/no, 1/0)";
  kind.parse = [=](std::string_view text, Scenario& scenario) {
    if (text == "auto") {
      field.In(scenario).reset();
      return true;
    }
    const std::optional<bool> value = ReadSwitch(text);
    if (value) field.In(scenario) = *value;
    return value.has_value();
  };
  kind.format = [=](const Scenario& scenario) {
    const std::optional<bool>& value = field.In(scenario);
    return std::string(!value ? "auto" : *value ? "on" : "off");
  };
  return kind;
}

// Any text; `expected` says what it means ("a file path").
template <typename Section>
ValueKind Text(Field<Section, std::string> field, std::string expected) {
  ValueKind kind;
  kind.expected = std::move(expected);
  kind.parse = [=](std::string_view text, Scenario& scenario) {
    field.In(scenario) = std::string(text);
    return true;
  };
  kind.format = [=](const Scenario& scenario) { return field.In(scenario); };
  return kind;
}

// File paths, one each time the key is given ("a; b" is what format writes for several, and
// reads back): a path may hold spaces but no ';'.
template <typename Section>
ValueKind FileList(Field<Section, std::vector<std::string>> field, std::string expected) {
  ValueKind kind;
  kind.expected = std::move(expected);
  kind.repeatable = true;
  kind.parse = [=](std::string_view text, Scenario& scenario) {
    std::vector<std::string> read;
    text = Trim(text);
    while (!text.empty()) {
      const size_t semicolon = text.find(';');
      const std::string_view path = Trim(text.substr(0, semicolon));
      if (path.empty()) return false;
      read.emplace_back(path);
      text = semicolon == std::string_view::npos ? std::string_view() : text.substr(semicolon + 1);
      // "" is what format writes for none; "a;" is a mistake.
      if (semicolon != std::string_view::npos && Trim(text).empty()) return false;
    }
    std::vector<std::string>& paths = field.In(scenario);
    paths.insert(paths.end(), read.begin(), read.end());
    return true;
  };
  kind.format = [=](const Scenario& scenario) {
    std::string text;
    for (const std::string& path : field.In(scenario)) text += (text.empty() ? "" : "; ") + path;
    return text;
  };
  return kind;
}

}  // namespace nbox::scenario
