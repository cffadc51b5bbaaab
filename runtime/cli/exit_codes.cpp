#include "runtime/cli/exit_codes.hpp"

#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace capstan::cli {

namespace {

// The subcommand the parser got furthest into ("capstan topic create" -> create).
CLI::App* deepest_parsed(CLI::App& app) {
  CLI::App* at = &app;
  for (auto subs = at->get_subcommands(); !subs.empty(); subs = at->get_subcommands()) at = subs.front();
  return at;
}

// "capstan topic create".
std::string command_path(const CLI::App* app) {
  std::string path = app->get_name();
  for (const CLI::App* p = app->get_parent(); p != nullptr; p = p->get_parent()) path = p->get_name() + " " + path;
  return path;
}

std::string subcommand_names(CLI::App* app) {
  std::string out;
  for (const CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; }))
    out += (out.empty() ? "" : ", ") + sub->get_name();
  return out;
}

// The first word left over that is not an option: what the user meant as a subcommand.
std::string first_leftover_word(const CLI::App* app) {
  for (const auto& word : app->remaining())
    if (!word.empty() && word.front() != '-') return word;
  return {};
}

// One line for a bad command line: the command, then what is wrong with which argument.
std::string describe(CLI::App& app, const CLI::ParseError& e) {
  CLI::App* at = deepest_parsed(app);
  const std::string path = command_path(at);
  const std::string help = "; see '" + path + " --help'";
  const std::string what = e.what();
  if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::RequiredError) && what.rfind("A subcommand", 0) == 0) {
    const std::string word = first_leftover_word(at);
    if (!word.empty())
      return "'" + word + "' is not a subcommand of " + path + "; it takes one of: " + subcommand_names(at);
    return path + " needs a subcommand, one of: " + subcommand_names(at);
  }
  if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::ExtrasError)) {
    std::string words;
    for (const CLI::App* a = at; a != nullptr; a = a->get_parent())
      for (const auto& w : a->remaining()) words += (words.empty() ? "" : " ") + w;
    if (words.empty()) return path + ": " + what + help;
    return path + ": unexpected argument '" + words + "'" + help;
  }
  if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::RequiredError)) return path + ": " + what + help;
  return path + ": " + what;
}

// Keeps the report to one line whatever a message holds.
std::string one_line(std::string text) {
  for (auto& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  return text;
}

} // namespace

int exit_code_for(errc code) {
  switch (code) {
  case errc::invalid_config:
  case errc::invalid_topic_exception:
  case errc::invalid_partitions:
  case errc::invalid_replication_factor:
  case errc::invalid_replica_assignment:
  case errc::invalid_required_acks:
    return exit_usage;
  default:
    return exit_failed;
  }
}

int run_app(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
    return exit_ok;
  } catch (const CLI::RuntimeError& e) {
    // A subcommand failed and has said why (fail()).
    return e.get_exit_code();
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e); // --help
    std::cout.flush();
    std::cerr << "error: " << one_line(describe(app, e)) << std::endl;
    return exit_usage;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "error: internal error: " << one_line(e.what()) << std::endl;
    return exit_failed;
  }
}

} // namespace capstan::cli
