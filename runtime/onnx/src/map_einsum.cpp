// ONNX Einsum by broadcasting: every operand is permuted and reshaped onto
// one common list of labels (the output's first, then the contracted ones),
// the operands are multiplied, and the contracted labels are summed away.
// Repeated labels inside an operand (a diagonal) are taken first with an
// identity mask. Simple and exact; a contraction of two large operands
// materializes their broadcast product, where a matmul would not.
#include <algorithm>
#include <map>

#include "import_context.h"

namespace oar::onnx::detail {

namespace {

using Labels = std::vector<int>;  // letters as chars; ellipsis dims as 1000 + position

constexpr int kEllipsis = 1000;

// Parses one term ("ab...c") for an operand of `rank` dims (rank < 0: the
// output, whose ellipsis spans `ellipsis_dims`).
Labels parse_term(NodeContext& c, const std::string& term, int64_t rank, int64_t ellipsis_dims) {
  Labels labels;
  size_t dots = term.find("...");
  std::string letters = term;
  if (dots != std::string::npos) letters.erase(dots, 3);
  for (char ch : letters)
    if (!std::isalpha(static_cast<unsigned char>(ch))) c.invalid(str("bad character '", ch, "' in equation"));
  int64_t own = rank < 0 ? ellipsis_dims : rank - int64_t(letters.size());
  if (dots == std::string::npos && rank >= 0 && own != 0)
    c.invalid(str("term '", term, "' has ", letters.size(), " labels for an operand of rank ", rank));
  if (own < 0 || own > ellipsis_dims) c.invalid(str("term '", term, "' does not fit its operand"));
  for (size_t i = 0; i < term.size();) {
    if (term.compare(i, 3, "...") == 0) {
      for (int64_t j = 0; j < own; ++j) labels.push_back(kEllipsis + int(ellipsis_dims - own + j));
      i += 3;
    } else {
      labels.push_back(term[i++]);
    }
  }
  return labels;
}

// Removes a repeated label by taking the diagonal of its two dims.
Value* take_diagonals(NodeContext& c, Value* x, Labels& labels) {
  for (;;) {
    size_t p = 0, q = 0;
    for (size_t i = 0; i < labels.size() && q == 0; ++i)
      for (size_t j = i + 1; j < labels.size(); ++j)
        if (labels[i] == labels[j]) {
          p = i;
          q = j;
          break;
        }
    if (q == 0) return x;
    int64_t n = c.shape(x)[p];
    if (c.shape(x)[q] != n) c.invalid("a repeated label spans dims of different sizes");
    std::vector<uint8_t> eye(static_cast<size_t>(n * n), 0);
    for (int64_t i = 0; i < n; ++i) eye[size_t(i * n + i)] = 1;
    Shape ms(labels.size(), 1);
    ms[p] = n;
    ms[q] = n;
    Value* mask = c.constant(Tensor::from_host(eye.data(), n * n, ms, DType::boolean, Device::cpu()));
    x = c.sum(c.where(mask, x, c.scalar(0, c.dtype(x))), {int64_t(q)}, false);
    labels.erase(labels.begin() + std::ptrdiff_t(q));
  }
}

std::vector<Value*> einsum_op(NodeContext& c) {
  std::string eq;
  for (char ch : c.attr_string("equation", "")) if (ch != ' ') eq += ch;
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != c.input_count()) c.invalid(str("equation has ", terms.size(), " terms for ", c.input_count(), " inputs"));
  int64_t ellipsis_dims = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    std::string letters = terms[i];
    size_t dots = letters.find("...");
    if (dots != std::string::npos)
      ellipsis_dims = std::max<int64_t>(ellipsis_dims, c.rank(c.required_input(i)) - int64_t(letters.size() - 3));
  }
  std::vector<Value*> xs;
  std::vector<Labels> labels;
  std::map<int, int64_t> sizes, counts;
  for (size_t i = 0; i < terms.size(); ++i) {
    Value* x = c.required_input(i);
    Labels l = parse_term(c, terms[i], c.rank(x), ellipsis_dims);
    for (int lab : l) ++counts[lab];
    x = take_diagonals(c, x, l);
    for (size_t j = 0; j < l.size(); ++j) sizes[l[j]] = std::max(sizes[l[j]], c.shape(x)[j]);
    xs.push_back(x);
    labels.push_back(l);
  }
  Labels out;
  if (arrow != std::string::npos) {
    out = parse_term(c, eq.substr(arrow + 2), -1, ellipsis_dims);
  } else {  // implicit: the ellipsis, then the labels used once, alphabetically
    for (int64_t j = 0; j < ellipsis_dims; ++j) out.push_back(kEllipsis + int(j));
    for (const auto& [lab, n] : counts)
      if (lab < kEllipsis && n == 1) out.push_back(lab);
  }
  Labels all = out;
  for (const Labels& l : labels)
    for (int lab : l)
      if (std::find(all.begin(), all.end(), lab) == all.end()) all.push_back(lab);
  for (int lab : out)
    if (!sizes.count(lab)) c.invalid("an output label appears in no input");
  // each operand onto the common label order (missing labels as size 1), multiplied
  Value* product = nullptr;
  for (size_t i = 0; i < xs.size(); ++i) {
    std::vector<int64_t> perm;
    Shape shape;
    for (int lab : all) {
      auto it = std::find(labels[i].begin(), labels[i].end(), lab);
      if (it == labels[i].end()) {
        shape.push_back(1);
      } else {
        perm.push_back(int64_t(it - labels[i].begin()));
        shape.push_back(c.shape(xs[i])[size_t(perm.back())]);
      }
    }
    Value* aligned = c.reshape(c.permute(xs[i], perm), shape);
    product = product == nullptr ? aligned : c.mul(product, aligned);
  }
  std::vector<int64_t> contracted;
  for (size_t j = out.size(); j < all.size(); ++j) contracted.push_back(int64_t(j));
  Shape out_shape;
  for (int lab : out) out_shape.push_back(sizes[lab]);
  if (!contracted.empty()) product = c.sum(product, contracted, false);
  return {c.expand(product, out_shape)};
}

}  // namespace

void register_einsum_mappers(MapperTable& t) { t.add("Einsum", einsum_op); }

}  // namespace oar::onnx::detail
