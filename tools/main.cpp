// memlake command-line tool: the subcommands register themselves (cli.h);
// this parses the line with CLI11 and runs the one given.
#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "cli.h"
#include "memlake/memlake.h"

namespace memlake::cli {
namespace {

std::vector<std::pair<int, Setup>>& registry() {
  static std::vector<std::pair<int, Setup>> r;
  return r;
}

}  // namespace

Command::Command(int order, Setup setup) { registry().emplace_back(order, setup); }

int usage_error(const std::string& msg) {
  std::fprintf(stderr, "memlake: %s\n(memlake --help lists the commands, memlake COMMAND --help their options)\n",
               msg.c_str());
  return 2;
}

}  // namespace memlake::cli

int main(int argc, char** argv) {
  using namespace memlake;
  CLI::App app{"memlake: a defragmenting caching allocator over CUDA virtual memory; its tools.", "memlake"};
  app.set_version_flag("--version", std::string("memlake ") + memlake_version());
  app.require_subcommand(0, 1);
  app.get_formatter()->column_width(30);
  auto& reg = cli::registry();
  std::stable_sort(reg.begin(), reg.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::pair<CLI::App*, cli::Action>> commands;
  for (const auto& [order, setup] : reg) {
    cli::Action action = setup(app);
    commands.emplace_back(app.get_subcommands({}).back(), std::move(action));
  }
  if (argc < 2) return cli::usage_error("no command");
  const std::string first = argv[1];
  if (first == "help") {
    std::fputs(app.help().c_str(), stdout);
    return 0;
  }
  if (first[0] != '-') {
    try {
      app.get_subcommand(first);
    } catch (const CLI::OptionNotFound&) {
      return cli::usage_error("unknown command '" + first + "'");
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return cli::usage_error(e.what());
  }
  for (auto& [sub, action] : commands)
    if (sub->parsed()) return action();
  return cli::usage_error("no command");
}
