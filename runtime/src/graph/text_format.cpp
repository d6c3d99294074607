// Graph <-> text (see text_format.h). Names and strings are written as
// <length>:<bytes> so they may hold any character; floats are written in
// hexadecimal so they read back bit for bit.
#include "oar/graph/text_format.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>

#include "oar/error.h"
#include "oar/op_registry.h"

namespace oar::graph {

namespace {

std::string quoted(const std::string& s) { return std::to_string(s.size()) + ":" + s; }

std::string hex_double(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%a", v);
  return buf;
}

void write_meta(std::ostringstream& os, const TensorMeta& m) {
  os << dtype_name(m.dtype) << " " << m.shape.size();
  for (int64_t d : m.shape) os << " " << d;
}

void write_attr(std::ostringstream& os, const std::string& name, const AttrValue& value) {
  os << " " << quoted(name) << " ";
  std::visit(
      [&](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, int64_t>) os << "i " << v;
        else if constexpr (std::is_same_v<V, double>) os << "f " << hex_double(v);
        else if constexpr (std::is_same_v<V, bool>) os << "b " << (v ? 1 : 0);
        else if constexpr (std::is_same_v<V, std::string>) os << "s " << quoted(v);
        else if constexpr (std::is_same_v<V, std::vector<int64_t>>) {
          os << "I " << v.size();
          for (int64_t x : v) os << " " << x;
        } else if constexpr (std::is_same_v<V, std::vector<double>>) {
          os << "F " << v.size();
          for (double x : v) os << " " << hex_double(x);
        } else {
          os << "d " << dtype_name(v);
        }
      },
      value);
}

// A cursor over the text that names the source and line in every error.
class Parser {
 public:
  Parser(const std::string& text, const std::string& source) : text_(text), source_(source) {}

  [[noreturn]] void fail(const std::string& problem) const {
    throw IOError(str("graph '", source_, "' line ", line_, ": ", problem));
  }
  bool at_end() {
    skip_space();
    return pos_ >= text_.size();
  }
  std::string word(const char* what) {
    skip_space();
    size_t start = pos_;
    while (pos_ < text_.size() && !std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    if (start == pos_) fail(str("expected ", what, " but the text ends"));
    return text_.substr(start, pos_ - start);
  }
  int64_t integer(const char* what) {
    std::string w = word(what);
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(w.c_str(), &end, 10);
    if (errno != 0 || end == w.c_str() || *end != '\0') fail(str("expected ", what, " (an integer), got '", w, "'"));
    return v;
  }
  double real(const char* what) {
    std::string w = word(what);
    char* end = nullptr;
    double v = std::strtod(w.c_str(), &end);
    if (end == w.c_str() || *end != '\0') fail(str("expected ", what, " (a number), got '", w, "'"));
    return v;
  }
  std::string string(const char* what) {
    skip_space();
    size_t colon = text_.find(':', pos_);
    if (colon == std::string::npos) fail(str("expected ", what, " (<length>:<text>)"));
    std::string len_text = text_.substr(pos_, colon - pos_);
    char* end = nullptr;
    unsigned long long len = std::strtoull(len_text.c_str(), &end, 10);
    if (len_text.empty() || *end != '\0') fail(str("expected ", what, " (<length>:<text>), got '", len_text, "'"));
    if (len > text_.size() - colon - 1) fail(str(what, " runs past the end of the text"));
    std::string s = text_.substr(colon + 1, len);
    for (char c : s) line_ += c == '\n';
    pos_ = colon + 1 + len;
    return s;
  }
  DType dtype(const char* what) {
    std::string w = word(what);
    try {
      return dtype_from_name(w);
    } catch (const Error&) {
      fail(str("unknown dtype '", w, "' for ", what));
    }
  }
  TensorMeta meta(const char* what) {
    TensorMeta m;
    m.dtype = dtype(what);
    int64_t ndim = integer("a rank");
    if (ndim < 0 || ndim > 64) fail(str(what, " has rank ", ndim));
    for (int64_t i = 0; i < ndim; ++i) {
      int64_t d = integer("a dimension");
      if (d < 0) fail(str(what, " has a negative dimension ", d));
      m.shape.push_back(d);
    }
    return m;
  }
  int line() const { return line_; }

 private:
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) {
      line_ += text_[pos_] == '\n';
      ++pos_;
    }
  }
  const std::string& text_;
  const std::string& source_;
  size_t pos_ = 0;
  int line_ = 1;
};

AttrValue read_attr(Parser& p) {
  std::string kind = p.word("an attribute type");
  if (kind == "i") return p.integer("an int attribute");
  if (kind == "f") return p.real("a float attribute");
  if (kind == "b") return p.integer("a bool attribute") != 0;
  if (kind == "s") return p.string("a string attribute");
  if (kind == "d") return p.dtype("a dtype attribute");
  if (kind == "I" || kind == "F") {
    int64_t n = p.integer("a list length");
    if (n < 0 || n > (int64_t(1) << 24)) p.fail(str("attribute list of length ", n));
    if (kind == "I") {
      std::vector<int64_t> v;
      for (int64_t i = 0; i < n; ++i) v.push_back(p.integer("a list entry"));
      return v;
    }
    std::vector<double> v;
    for (int64_t i = 0; i < n; ++i) v.push_back(p.real("a list entry"));
    return v;
  }
  p.fail(str("unknown attribute type '", kind, "'"));
}

}  // namespace

std::string to_text(const Graph& g) {
  std::ostringstream os;
  os << "oar-graph " << kGraphTextVersion << "\n";
  for (const Value* v : g.inputs()) {
    os << "value " << v->id << " input " << quoted(v->name) << " ";
    write_meta(os, v->meta);
    os << "\n";
  }
  for (const Value* v : g.tensors()) {
    os << "value " << v->id << " " << value_kind_name(v->kind) << " " << quoted(v->name) << " ";
    write_meta(os, v->meta);
    os << "\n";
  }
  for (const auto& n : g.nodes()) {
    os << "node " << quoted(n->op->name) << " in " << n->inputs.size();
    for (const Value* v : n->inputs) os << " " << (v != nullptr ? std::to_string(v->id) : "_");
    os << " out " << n->outputs.size();
    for (const Value* v : n->outputs) {
      os << " " << v->id << " ";
      write_meta(os, v->meta);
    }
    os << " attrs " << n->attrs.items().size();
    for (const auto& [name, value] : n->attrs.items()) write_attr(os, name, value);
    os << "\n";
  }
  for (const auto& u : g.updates()) os << "update " << u.target->id << " " << u.source->id << "\n";
  os << "output " << g.outputs().size();
  for (const Value* v : g.outputs()) os << " " << v->id;
  os << "\n";
  return os.str();
}

std::unique_ptr<Graph> from_text(const std::string& text, const std::function<Tensor(int32_t id)>& tensor_of,
                                 const std::string& source) {
  Parser p(text, source);
  if (p.word("the header") != "oar-graph") p.fail("not an oar graph (the text does not start with 'oar-graph')");
  int64_t version = p.integer("the format version");
  if (version < 1) p.fail(str("invalid format version ", version));
  if (version > kGraphTextVersion)
    p.fail(str("graph format version ", version, " is newer than this build supports (", kGraphTextVersion,
               "); upgrade oar to read it"));
  auto g = std::make_unique<Graph>();
  std::map<int64_t, Value*> values;
  auto lookup = [&](const std::string& ref) -> Value* {
    if (ref == "_") return nullptr;
    char* end = nullptr;
    long long id = std::strtoll(ref.c_str(), &end, 10);
    if (ref.empty() || *end != '\0') p.fail(str("expected a value id, got '", ref, "'"));
    auto it = values.find(id);
    if (it == values.end()) p.fail(str("value ", id, " is used before it is defined"));
    return it->second;
  };
  auto define = [&](int64_t id, Value* v) {
    if (!values.emplace(id, v).second) p.fail(str("value ", id, " is defined twice"));
  };
  bool have_outputs = false;
  while (!p.at_end()) {
    std::string record = p.word("a record");
    if (record == "value") {
      int64_t id = p.integer("a value id");
      std::string kind = p.word("a value kind");
      std::string name = p.string("a value name");
      TensorMeta meta = p.meta("the value");
      if (kind == "input") {
        define(id, g->add_input(name, meta));
        continue;
      }
      if (kind != "captured" && kind != "constant") p.fail(str("unknown value kind '", kind, "'"));
      Tensor t = tensor_of(int32_t(id));
      if (!t.defined()) p.fail(str("the data of value ", id, " ('", name, "') is missing"));
      if (t.shape() != meta.shape || t.dtype() != meta.dtype)
        p.fail(str("the data of value ", id, " ('", name, "') is ", dtype_name(t.dtype()), shape_str(t.shape()),
                   ", the graph says ", dtype_name(meta.dtype), shape_str(meta.shape)));
      define(id, kind == "captured" ? g->add_captured(name, t) : g->add_constant(name, t));
    } else if (record == "node") {
      std::string op_name = p.string("an op name");
      const OpSchema* op = OpRegistry::instance().find(op_name);
      if (op == nullptr) p.fail(str("unknown op '", op_name, "' (saved by a newer oar, or a corrupt file)"));
      if (p.word("'in'") != "in") p.fail("expected 'in'");
      int64_t n_in = p.integer("an input count");
      if (n_in < 0 || n_in > 4096) p.fail(str("node has ", n_in, " inputs"));
      std::vector<Value*> inputs;
      for (int64_t i = 0; i < n_in; ++i) inputs.push_back(lookup(p.word("an input id")));
      if (p.word("'out'") != "out") p.fail("expected 'out'");
      int64_t n_out = p.integer("an output count");
      if (n_out < 0 || n_out > 4096) p.fail(str("node has ", n_out, " outputs"));
      std::vector<std::pair<int64_t, TensorMeta>> outs;
      for (int64_t i = 0; i < n_out; ++i) {
        int64_t id = p.integer("an output id");
        outs.emplace_back(id, p.meta("a node output"));
      }
      if (p.word("'attrs'") != "attrs") p.fail("expected 'attrs'");
      int64_t n_attrs = p.integer("an attribute count");
      if (n_attrs < 0 || n_attrs > 4096) p.fail(str("node has ", n_attrs, " attributes"));
      Attrs attrs;
      for (int64_t i = 0; i < n_attrs; ++i) {
        std::string name = p.string("an attribute name");
        attrs.set(name, read_attr(p));
      }
      Node* node = nullptr;
      try {
        node = g->add_node(*op, inputs, attrs);
      } catch (const Error& e) {
        p.fail(str("node '", op_name, "': ", e.what()));
      }
      if (node->outputs.size() != outs.size())
        p.fail(str("node '", op_name, "' has ", outs.size(), " outputs in the file, ", node->outputs.size(),
                   " by inference"));
      for (size_t i = 0; i < outs.size(); ++i) {
        const TensorMeta& m = node->outputs[i]->meta;
        if (m.shape != outs[i].second.shape || m.dtype != outs[i].second.dtype)
          p.fail(str("node '", op_name, "' output ", i, " is ", dtype_name(outs[i].second.dtype),
                     shape_str(outs[i].second.shape), " in the file but ", dtype_name(m.dtype), shape_str(m.shape),
                     " by this build's inference"));
        define(outs[i].first, node->outputs[i]);
      }
    } else if (record == "update") {
      Value* target = lookup(p.word("an update target"));
      Value* src = lookup(p.word("an update source"));
      if (target == nullptr || src == nullptr) p.fail("an update names an absent value");
      g->add_update(target, src);
    } else if (record == "output") {
      int64_t n = p.integer("an output count");
      if (n < 0 || n > 4096) p.fail(str("graph has ", n, " outputs"));
      std::vector<Value*> outs;
      for (int64_t i = 0; i < n; ++i) {
        Value* v = lookup(p.word("an output id"));
        if (v == nullptr) p.fail("a graph output is absent");
        outs.push_back(v);
      }
      g->set_outputs(std::move(outs));
      have_outputs = true;
    } else {
      p.fail(str("unknown record '", record, "'"));
    }
  }
  if (!have_outputs) p.fail("the graph has no 'output' record (truncated?)");
  try {
    g->verify();
  } catch (const GraphError& e) {
    throw IOError(str("graph '", source, "': ", e.what()));
  }
  return g;
}

}  // namespace oar::graph
