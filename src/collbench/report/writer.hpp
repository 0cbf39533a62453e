// One writer registry for every subcommand's output, in the manner of nvbench's printer_base and
// printer_multiplex: a subcommand's result (a gate report, a locate report, model rows, ...) is
// rendered by a Writer<Data>; the writers of one kind of result are registered by name in a
// WriterRegistry<Data> (the names are what --format accepts); a WriterMultiplex<Data> writes one
// result in several formats at once, each to its own target (standard output or a file), so one
// run can print a table and write JSON to a file (`--format table --format json=out.json`).
// Writers only render: every number they print is a field of the result they are given.
// run and sweep stream records as they finish: their writers are report::ConsoleWriter
// (console_writer.hpp), registered and multiplexed the same way.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collbench/record/jsonl.hpp"

namespace collbench::report {

// Where one writer's text goes: standard output, or a file.
struct OutputTarget {
  OutputTarget() = default;
  OutputTarget(std::string format_, std::optional<std::string> path_ = std::nullopt, std::string flag_ = "--format",
               bool announce_ = false)
      : format(std::move(format_)), path(std::move(path_)), flag(std::move(flag_)), announce(announce_) {}

  std::string format;               // a registered writer name
  std::optional<std::string> path;  // none: standard output
  std::string flag = "--format";    // the flag that asked for it, prefixing messages (--junit); empty: none
  bool announce = false;            // after writing the file: "collbench: wrote PATH" on standard error
};

// "FMT" (standard output) or "FMT=PATH" (a file), FMT one of `names`. InputError naming `flag`, the
// value and the accepted names for an unknown FMT; for an empty PATH, a PATH that is a folder or one
// whose folder does not exist.
OutputTarget parse_output_target(std::string_view text, const std::vector<std::string>& names,
                                 std::string_view flag = "--format");

// The targets of a repeatable `--format FMT[=PATH]`: at most one FMT alone (standard output; the
// default `fallback` when none is given), then the files in the order given. InputError as
// parse_output_target, and for two formats on standard output.
std::vector<OutputTarget> parse_output_targets(const std::vector<std::string>& values,
                                               const std::vector<std::string>& names, const std::string& fallback,
                                               std::string_view flag = "--format");

// run and sweep, before anything is written (a measurement is costly to repeat), on rank 0:
// InputError for a --format file that is the --out file or another --format target's file, and
// for one that already holds something (a non-empty regular file) unless `mode` is force (then
// replaced); under resume too, since --resume continues only the --out file. Devices, FIFOs and
// open descriptors (/dev/stdout) pass: they are written, never replaced.
void check_run_output_files(const std::vector<OutputTarget>& targets, const std::optional<std::string>& out_path,
                            record::OpenMode mode);

// Writes TEXT where `target` says: standard output (written and flushed; a failed write is
// reported when the command ends, core/checked_output.hpp check_stdout), or the file, replaced
// through a temporary and a rename (write_file_checked; messages name target.flag).
void write_output(const OutputTarget& target, std::string_view text);

// Renders one kind of result (Data) in one format.
template <class Data>
class Writer {
 public:
  virtual ~Writer() = default;
  [[nodiscard]] virtual std::string render(const Data& data) const = 0;
};

// A writer from a render function: what most formats are.
template <class Data>
class FunctionWriter final : public Writer<Data> {
 public:
  using Render = std::function<std::string(const Data&)>;
  explicit FunctionWriter(Render render) : render_(std::move(render)) {}
  [[nodiscard]] std::string render(const Data& data) const override { return render_(data); }

 private:
  Render render_;
};

// InputError: "unknown WHAT 'NAME'; accepted: ..." (the names in registration order).
[[noreturn]] void throw_unknown_writer(std::string_view what, std::string_view name,
                                       const std::vector<std::string>& names);

// The writers of one kind of result, by name, in registration order.
template <class Data>
class WriterRegistry {
 public:
  using Render = typename FunctionWriter<Data>::Render;
  using Factory = std::function<std::unique_ptr<Writer<Data>>()>;

  // `what` names the output in messages ("gate format").
  explicit WriterRegistry(std::string what) : what_(std::move(what)) {}
  WriterRegistry& add(std::string name, Render render) {
    return add_factory(std::move(name), [render] { return std::make_unique<FunctionWriter<Data>>(render); });
  }
  WriterRegistry& add_factory(std::string name, Factory make) {
    entries_.emplace_back(std::move(name), std::move(make));
    return *this;
  }
  [[nodiscard]] std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& entry : entries_) out.push_back(entry.first);
    return out;
  }
  // The writer registered as `name`; InputError naming the accepted names for another.
  [[nodiscard]] std::unique_ptr<Writer<Data>> make(std::string_view name) const {
    for (const auto& [n, factory] : entries_)
      if (n == name) return factory();
    throw_unknown_writer(what_, name, names());
  }

 private:
  std::string what_;
  std::vector<std::pair<std::string, Factory>> entries_;
};

// Several writers of one result, each with its target: write() renders the result once per
// writer and writes each text to its target, in the order they were added.
template <class Data>
class WriterMultiplex {
 public:
  WriterMultiplex(const WriterRegistry<Data>& registry, const std::vector<OutputTarget>& targets) {
    for (const auto& t : targets) entries_.emplace_back(registry.make(t.format), t);
  }
  void write(const Data& data) const {
    for (const auto& [writer, target] : entries_) write_output(target, writer->render(data));
  }
  [[nodiscard]] std::size_t size() const { return entries_.size(); }

 private:
  std::vector<std::pair<std::unique_ptr<Writer<Data>>, OutputTarget>> entries_;
};

}  // namespace collbench::report
