// The memlake command's subcommands (CLI11). Each lives in its own
// tools/<name>_cmd.cpp and registers itself with one line:
//
//   MEMLAKE_CLI_COMMAND(50, setup_sim);   // 50: its place in `memlake --help`
//
// where `cli::Action setup_sim(CLI::App& app)` adds the subcommand (its options
// and help) to `app` and returns what runs it once the line is parsed. CMake
// builds every tools/*_cmd.cpp into the command (a new file is found at the next
// build), and CliEverySubcommandHasHelp checks its --help.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace memlake::cli {

// Runs a parsed subcommand; returns the process's exit status.
using Action = std::function<int()>;
using Setup = Action (*)(CLI::App& app);

// Registration (a static object per subcommand; see MEMLAKE_CLI_COMMAND).
struct Command {
  Command(int order, Setup setup);
};

// A usage error: "memlake: MSG" and where the help is, on stderr; returns 2.
int usage_error(const std::string& msg);

}  // namespace memlake::cli

#define MEMLAKE_CLI_COMMAND(order, setup) \
  static const ::memlake::cli::Command memlake_cli_command_##setup { order, setup }
