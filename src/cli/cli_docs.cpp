// Completion script, man page and unknown-option messages from the CLI11 tree (cli_docs.hpp).
#include "cli/cli_docs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <sstream>

#include "collbench/core/build_info.hpp"
#include "collbench/core/error.hpp"

namespace collbench::cli {

namespace {

std::vector<const CLI::Option*> named_options(const CLI::App& app) {
  return app.get_options([](const CLI::Option* o) { return o->nonpositional(); });
}

std::vector<const CLI::Option*> positionals(const CLI::App& app) {
  return app.get_options([](const CLI::Option* o) { return o->get_positional() && !o->nonpositional(); });
}

bool takes_value(const CLI::Option* o) {
  return o->get_type_size_max() > 0 && o->get_expected_max() != 0;
}

// A shell word for a bash `case` pattern or a quoted list: the names here are plain words.
std::string words(const std::vector<std::string>& names) {
  return join(names, " ");
}

// roff: escape backslashes, and a leading '.' or '\'' that would read as a request.
std::string roff(const std::string& text) {
  std::string out;
  bool line_start = true;
  for (const char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
    line_start = c == '\n';
  }
  return out;
}

std::string synopsis(const CLI::App& app) {
  std::string s = command_path(app);
  for (const auto* p : positionals(app)) {
    std::string name = p->get_name(true, false);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::toupper(c); });
    s += p->get_required() ? " " + name : " [" + name + "]";
    if (p->get_expected_max() > 1) s += "...";
  }
  if (!named_options(app).empty()) s += " [OPTIONS]";
  if (!all_subcommands(app).empty()) s += " [COMMAND]";
  return s;
}

void add_man_command(std::ostringstream& out, const CLI::App& app) {
  out << ".SS \"" << roff(synopsis(app)) << "\"\n" << roff(app.get_description()) << "\n";
  for (const auto* o : named_options(app)) {
    out << ".TP\n";
    std::vector<std::string> names;
    for (const auto& s : o->get_snames()) names.push_back("\\fB" + roff("-" + s) + "\\fR");
    for (const auto& l : o->get_lnames()) names.push_back("\\fB" + roff("--" + l) + "\\fR");
    out << join(names, ", ");
    if (takes_value(o)) {
      const std::string type = o->get_type_name().empty() ? "VALUE" : o->get_type_name();
      out << " \\fI" << roff(type) << "\\fR";
    }
    out << "\n" << roff(o->get_description().empty() ? std::string("(no description)") : o->get_description()) << "\n";
  }
  for (const auto* p : positionals(app)) {
    out << ".TP\n\\fI" << roff(p->get_name(true, false)) << "\\fR\n" << roff(p->get_description()) << "\n";
  }
  if (const std::string footer = app.get_footer(); !footer.empty()) {
    out << ".PP\n.nf\n" << roff(footer) << "\n.fi\n";
  }
  for (const auto* sub : all_subcommands(app)) add_man_command(out, *sub);
}

void add_bash_cases(std::ostringstream& cmd_case, std::ostringstream& data_case, const CLI::App& app) {
  std::vector<std::string> subs;
  for (const auto* sub : all_subcommands(app)) subs.push_back(sub->get_name());
  std::vector<std::string> valued;
  for (const auto* o : named_options(app)) {
    if (!takes_value(o)) continue;
    for (const auto& s : o->get_snames()) valued.push_back("-" + s);
    for (const auto& l : o->get_lnames()) valued.push_back("--" + l);
  }
  const std::string path = command_path(app);
  for (const auto& s : subs) cmd_case << "      \"" << path << " " << s << "\") path=\"$path $w\" ;;\n";
  data_case << "    \"" << path << "\")\n"
            << "      subs=\"" << words(subs) << "\"\n"
            << "      opts=\"" << words(option_names(app)) << "\"\n"
            << "      valued=\"" << words(valued) << "\"\n"
            << "      files=" << (positionals(app).empty() ? 0 : 1) << " ;;\n";
  for (const auto* sub : all_subcommands(app)) add_bash_cases(cmd_case, data_case, *sub);
}

}  // namespace

std::vector<const CLI::App*> all_subcommands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}

std::string command_path(const CLI::App& app) {
  // The root is "collbench" whatever argv[0] was (CLI11 names the root after it when parsing).
  if (app.get_parent() == nullptr) return "collbench";
  return command_path(*app.get_parent()) + " " + app.get_name();
}

std::vector<std::string> option_names(const CLI::App& app) {
  std::vector<std::string> out;
  for (const auto* o : named_options(app)) {
    for (const auto& l : o->get_lnames()) out.push_back("--" + l);
    for (const auto& s : o->get_snames()) out.push_back("-" + s);
  }
  return out;
}

std::string bash_completion(const CLI::App& root) {
  std::ostringstream cmd_case;
  std::ostringstream data_case;
  add_bash_cases(cmd_case, data_case, root);
  std::ostringstream out;
  out << "# bash completion for collbench " << build::kVersion
      << " (generated by `collbench completion bash` from the command definitions).\n"
         "# Install: collbench completion bash > ~/.local/share/bash-completion/completions/collbench\n"
         "# (packages install it to share/bash-completion/completions/collbench).\n"
         "_collbench() {\n"
         "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
         "  local path=\"collbench\" w i\n"
         "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
         "    w=\"${COMP_WORDS[i]}\"\n"
         "    case \"$path $w\" in\n"
      << cmd_case.str()
      << "    esac\n"
         "  done\n"
         "  local subs=\"\" opts=\"\" valued=\"\" files=0\n"
         "  case \"$path\" in\n"
      << data_case.str()
      << "  esac\n"
         "  if [[ \" $valued \" == *\" $prev \"* ]]; then\n"
         "    COMPREPLY=($(compgen -f -- \"$cur\"))\n"
         "  elif [[ \"$cur\" == -* ]]; then\n"
         "    COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
         "  else\n"
         "    COMPREPLY=($(compgen -W \"$subs\" -- \"$cur\"))\n"
         "    if ((files)); then COMPREPLY+=($(compgen -f -- \"$cur\")); fi\n"
         "  fi\n"
         "  return 0\n"
         "}\n"
         "complete -o filenames -F _collbench collbench\n";
  return out.str();
}

std::string man_page(const CLI::App& root) {
  std::ostringstream out;
  out << ".\\\" Generated by `collbench man` from the command definitions; do not edit.\n"
      << ".TH COLLBENCH 1 \"\" \"collbench " << build::kVersion << "\" \"User Commands\"\n"
      << ".SH NAME\ncollbench \\- collective\\-communication benchmarks for GPU clusters (MPI on CPU, NCCL on GPU)\n"
      << ".SH SYNOPSIS\n.B collbench\n\\fICOMMAND\\fR [\\fIOPTIONS\\fR]\n.br\n"
      << ".B mpiexec \\-n\n\\fIN\\fR \\fBcollbench run\\fR \\fICOLLECTIVE\\fR [\\fIOPTIONS\\fR]\n.br\n"
      << ".B srun \\-\\-mpi=pmix \\-n\n\\fIN\\fR \\fBcollbench run\\fR \\fICOLLECTIVE\\fR [\\fIOPTIONS\\fR]\n"
      << ".SH DESCRIPTION\n"
      << roff(root.get_description())
      << "\n.PP\nCommands that measure (run, sweep, accept, locate, calibrate) run under an MPI launcher "
         "(mpiexec, mpirun, srun); the others run alone. Results are JSONL records, schema collbench.result/1.\n"
      << ".SH OPTIONS\n";
  for (const auto* o : named_options(root)) {
    std::vector<std::string> names;
    for (const auto& s : o->get_snames()) names.push_back("\\fB" + roff("-" + s) + "\\fR");
    for (const auto& l : o->get_lnames()) names.push_back("\\fB" + roff("--" + l) + "\\fR");
    out << ".TP\n" << join(names, ", ") << "\n" << roff(o->get_description()) << "\n";
  }
  out << ".SH COMMANDS\n";
  for (const auto* sub : all_subcommands(root)) add_man_command(out, *sub);
  out << ".SH EXIT STATUS\n"
         ".TP\n0\nok\n.TP\n1\na check failed (wrong elements, gate regression, acceptance FAIL)\n"
         ".TP\n2\nbad input or usage (the message names the flag, file or key and the accepted values)\n"
         ".TP\n3\nwatchdog timeout or aborted run\n.TP\n4\ncomparison not possible (gate: nothing comparable)\n"
         ".SH ENVIRONMENT\n"
         ".TP\nCOLLBENCH_PROFILE_PATH\nfolders (separated by ':') searched first for systems/, workloads/ and "
         "acceptance/ profiles (then COLLBENCH_PROFILE_DIR, ~/.config/collbench/profiles, the installed "
         "share/collbench/profiles)\n"
         ".TP\nXDG_CONFIG_HOME\nholds collbench/cpu\\-local.yaml, the calibrated CPU profile (default ~/.config)\n"
         ".TP\nCOLLBENCH_PYTHON\nthe Python that draws report plots (default /usr/bin/python3)\n"
         ".TP\nCOLLBENCH_FAULT\ntest\\-only fault injection, recorded in every affected record\n"
         ".SH FILES\n"
         ".TP\n<prefix>/share/collbench/profiles\nsystem, workload, sweep and acceptance profiles\n"
         ".TP\n<prefix>/share/collbench/schema/collbench.result\\-1.schema.json\nJSON Schema of a record\n"
         ".TP\n<prefix>/share/collbench/plotting\nthe collbench_plot Python package (report plots)\n"
         ".SH SEE ALSO\nmpiexec(1), srun(1); docs/launching.md and docs/install.md in the source tree\n";
  return out.str();
}

std::string unknown_option_message(const CLI::App& root, const std::vector<std::string>& args) {
  const CLI::App* cur = &root;
  for (const auto& arg : args) {
    if (arg == "--") break;
    const bool is_long = arg.size() > 2 && arg.rfind("--", 0) == 0;
    const bool is_short =
        !is_long && arg.size() >= 2 && arg[0] == '-' && std::isalpha(static_cast<unsigned char>(arg[1])) != 0;
    if (is_long || is_short) {
      const std::string name = is_long ? arg.substr(0, arg.find('=')) : arg.substr(0, 2);
      std::vector<std::string> valid;
      for (const CLI::App* a = cur; a != nullptr; a = a->get_parent()) {
        for (auto& n : option_names(*a)) valid.push_back(std::move(n));
      }
      if (std::find(valid.begin(), valid.end(), name) != valid.end()) continue;
      std::vector<std::string> long_names;
      for (const auto& v : valid) {
        if (v.rfind("--", 0) == 0) long_names.push_back(v);
      }
      const std::string guess = closest_match(name, is_long ? long_names : valid);
      const std::string path = command_path(*cur);
      return fmt::format("unknown option '{}' for '{}'{}; run '{} --help' for the accepted options", name, path,
                         guess.empty() ? std::string() : fmt::format(" (did you mean '{}'?)", guess), path);
    }
    for (const auto* sub : all_subcommands(*cur)) {
      if (sub->get_name() == arg) {
        cur = sub;
        break;
      }
    }
  }
  return {};
}

}  // namespace collbench::cli
