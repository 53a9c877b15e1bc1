#include "app/client/cli_errors.h"

#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace kairos::client {

namespace {

// The deepest command the parser reached: `kairosd query` for `kairosd query foo`.
CLI::App* DeepestCommand(CLI::App& cli) {
  CLI::App* cur = &cli;
  while (!cur->get_subcommands().empty()) cur = cur->get_subcommands().front();
  return cur;
}

std::string CommandPath(const CLI::App* cmd) {
  std::string path = cmd->get_name();
  for (const CLI::App* p = cmd->get_parent(); p != nullptr; p = p->get_parent()) {
    path = p->get_name() + " " + path;
  }
  return path;
}

std::vector<CLI::App*> Commands(CLI::App* cmd) {
  return cmd->get_subcommands([](CLI::App* sub) { return !sub->get_name().empty(); });
}

void PrintCommands(CLI::App* cmd) {
  const std::vector<CLI::App*> subs = Commands(cmd);
  std::size_t width = 0;
  for (const CLI::App* s : subs) width = std::max(width, s->get_name().size());
  std::cerr << "Commands of '" << CommandPath(cmd) << "':\n";
  for (const CLI::App* s : subs) {
    std::cerr << "  " << s->get_name() << std::string(width + 2 - s->get_name().size(), ' ')
              << s->get_description() << "\n";
  }
}

}  // namespace

int ReportParseError(CLI::App& cli, const CLI::ParseError& e) {
  const int code = e.get_exit_code();
  // --help, --version and Fail's RuntimeError: CLI11 prints (or not) as it always did.
  if (code == static_cast<int>(CLI::ExitCodes::Success) ||
      dynamic_cast<const CLI::RuntimeError*>(&e) != nullptr) {
    return cli.exit(e);
  }
  CLI::App* cmd = DeepestCommand(cli);
  const std::string path = CommandPath(cmd);
  const std::vector<std::string> extras = cli.remaining(/*recurse=*/true);
  const auto first_word = std::find_if(extras.begin(), extras.end(),
                                       [](const std::string& a) { return !a.starts_with("-"); });
  const auto first_flag = std::find_if(extras.begin(), extras.end(),
                                       [](const std::string& a) { return a.starts_with("-"); });
  const bool is_group = !Commands(cmd).empty();

  if (is_group && (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr ||
                   dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr)) {
    if (first_word != extras.end()) {
      std::cerr << "error: unknown command '" << *first_word << "' for '" << path << "'\n";
      PrintCommands(cmd);
      return static_cast<int>(CLI::ExitCodes::ExtrasError);
    }
    if (first_flag != extras.end()) {
      std::cerr << "error: unknown flag '" << *first_flag << "' for '" << path << "'\n";
    } else {
      std::cerr << "error: '" << path << "' needs a command\n";
    }
    PrintCommands(cmd);
    return static_cast<int>(CLI::ExitCodes::RequiredError);
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr && !extras.empty()) {
    if (first_flag != extras.end()) {
      std::cerr << "error: unknown flag '" << *first_flag << "' for '" << path << "'\n";
    } else {
      std::cerr << "error: unexpected argument '" << *first_word << "' for '" << path << "'\n";
    }
  } else {
    std::cerr << "error: " << path << ": " << e.what() << "\n";
  }
  std::cerr << "Run '" << path << " --help' for its arguments and flags.\n";
  return code;
}

std::optional<int> ParseCommandLine(CLI::App& cli, int argc, const char* const* argv) {
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return ReportParseError(cli, e);
  }
  return std::nullopt;
}

}  // namespace kairos::client
