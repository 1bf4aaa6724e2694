// memlake options [--markdown], memlake version
#include <cstdio>
#include <memory>
#include <string>

#include "cli.h"
#include "core/options.h"
#include "memlake/memlake.h"

namespace memlake::cli {
namespace {

Action setup_options(CLI::App& app) {
  auto* sub = app.add_subcommand("options", "print the configuration table (the MEMLAKE_* variables)");
  auto markdown = std::make_shared<bool>(false);
  sub->add_flag("--markdown", *markdown, "as a Markdown table (the README's: scripts/readme_options.sh puts it there)");
  return [markdown] {
    if (*markdown) {
      std::printf("| key | environment variable | default | meaning |\n|---|---|---|---|\n");
      for (const auto& o : option_table()) {
        const std::string def = *o.default_value ? "`" + std::string(o.default_value) + "`" : "(empty)";
        std::printf("| `%s` | `%s` | %s | %s |\n", o.key, o.env, def.c_str(), o.doc);
      }
      return 0;
    }
    for (const auto& o : option_table())
      std::printf("%-18s %-26s default %-8s\n    %s\n", o.key, o.env, o.default_value, o.doc);
    return 0;
  };
}

Action setup_version(CLI::App& app) {
  app.add_subcommand("version", "print the version");
  return [] {
    std::printf("memlake %s\n", memlake_version());
    return 0;
  };
}

}  // namespace

MEMLAKE_CLI_COMMAND(50, setup_options);
MEMLAKE_CLI_COMMAND(60, setup_version);

}  // namespace memlake::cli
