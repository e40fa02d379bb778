// Exact texts for values of scenario keys: what the docs show as defaults and ranges and what
// Scenario::settings reports. Each text reads back, through the matching nbox:: parser, to
// exactly the same value ("100Gbps", "25MiB", "1us", "60.2M"), choosing the largest unit
// that keeps the text short and exact.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace nbox::scenario {

// `text` without its leading and trailing spaces and tabs.
std::string_view Trim(std::string_view text);

std::string WholeNumberText(uint64_t value);  // "65536"
std::string BytesText(uint64_t bytes);        // "1500", "4MB", "25MiB" (plain below 10000)
std::string CountText(uint64_t count);        // "8", "60.2M", "1.5B"
std::string RateText(double bps);             // "100Gbps", "1.5Mbps"
std::string DurationText(double seconds);     // "1us", "2.5ms", "0s"
std::string FlopRateText(double flops);       // "125TFLOPS"
std::string FlopCountText(double flops);      // "11.3GFLOP", "0"
std::string RealText(double value);           // "0.4", "2" (shortest that reads back)

}  // namespace nbox::scenario
