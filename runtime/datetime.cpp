#include "runtime/datetime.hpp"

#include <cctype>
#include <ctime>

namespace capstan {

namespace {

// Reads `n` digits at `at` into `out`.
bool digits(const std::string& s, size_t& at, size_t n, int& out) {
  if (s.size() - at < n) return false;
  out = 0;
  for (size_t i = 0; i < n; ++i) {
    const char c = s[at + i];
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    out = out * 10 + (c - '0');
  }
  at += n;
  return true;
}

bool literal(const std::string& s, size_t& at, char c) {
  if (at >= s.size() || s[at] != c) return false;
  ++at;
  return true;
}

int days_in_month(int year, int month) {
  static constexpr int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : days[month - 1];
}

} // namespace

result<int64_t> parse_datetime(const std::string& text) {
  const auto bad = make_error(errc::invalid_request,
                              "'" + text + "' is not a date-time of the form YYYY-MM-DDTHH:mm:SS[.sss], "
                              "optionally followed by Z or +HH:mm");
  size_t at = 0;
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, millis = 0;
  if (!digits(text, at, 4, year) || !literal(text, at, '-') || !digits(text, at, 2, month) ||
      !literal(text, at, '-') || !digits(text, at, 2, day) || !literal(text, at, 'T') ||
      !digits(text, at, 2, hour) || !literal(text, at, ':') || !digits(text, at, 2, minute) ||
      !literal(text, at, ':') || !digits(text, at, 2, second))
    return bad;
  if (literal(text, at, '.') && !digits(text, at, 3, millis)) return bad;
  if (month < 1 || month > 12 || day < 1 || day > days_in_month(year, month) || hour > 23 || minute > 59 ||
      second > 59)
    return bad;
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  int64_t seconds = 0;
  if (at == text.size()) {
    tm.tm_isdst = -1;
    seconds = static_cast<int64_t>(std::mktime(&tm));
  } else if (literal(text, at, 'Z')) {
    if (at != text.size()) return bad;
    seconds = static_cast<int64_t>(timegm(&tm));
  } else {
    const char sign = text[at];
    if (sign != '+' && sign != '-') return bad;
    ++at;
    int oh = 0, om = 0;
    if (!digits(text, at, 2, oh)) return bad;
    literal(text, at, ':');
    if (!digits(text, at, 2, om) || at != text.size() || oh > 23 || om > 59) return bad;
    const int64_t offset = (oh * 60 + om) * 60;
    seconds = static_cast<int64_t>(timegm(&tm)) - (sign == '+' ? offset : -offset);
  }
  return seconds * 1000 + millis;
}

} // namespace capstan
