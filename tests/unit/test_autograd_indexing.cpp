// Gradient rules of indexing, join/split and pad ops, and of the view methods
// (t, slice, select, expand, reshape, (un)squeeze, permute, dtype round trip):
// gradchecks against central finite differences in f64 (repeated indices,
// negative dims, non-contiguous inputs), second-order gradchecks, analytic
// values for mixed dtypes, and ops that must carry no gradient.
#include "gradcheck.h"

using namespace oar;
using namespace oar::testing;

namespace {

using Ints = std::vector<int64_t>;

Tensor rnd(const Shape& shape, uint32_t seed, Device dev) {
  return make_tensor(random_values(numel_of(shape), -1, 1, seed, DType::f64), shape, DType::f64, dev);
}
Tensor ids(const std::vector<double>& v, const Shape& shape, Device dev) {
  return make_tensor(v, shape, DType::i64, dev);
}
std::vector<Tensor> one(const Tensor& t) { return {t}; }
Tensor sq(const Tensor& t) { return call1("square", {t}); }
Attrs dim(int64_t d) { return {{"dim", d}}; }
Attrs pad_attrs(const Ints& pads, const std::string& mode, double value = 0.0) {
  return {{"pads", pads}, {"mode", mode}, {"value", value}};
}

}  // namespace

TEST(AutogradIndexing, GatherAndIndexSelect) {
  for (Device dev : devices()) {
    Tensor x = rnd({3, 4}, 1, dev);
    // repeated indices accumulate; index smaller than x in the other dim
    Tensor i1 = ids({0, 3, 3, 1, 2, 0}, {2, 3}, dev);
    Tensor i0 = ids({2, 0, 2, 1, 1, 1}, {2, 3}, dev);
    for (int64_t d : {1, -1})
      gradcheck(
          [&](const std::vector<Tensor>& a) {
            return one(call1("gather", {a[0], a[1]}, dim(d)));
          },
          {x, i1}, {true, false}, "gather dim " + std::to_string(d));
    gradcheck(
        [&](const std::vector<Tensor>& a) {
          return one(call1("gather", {a[0], a[1]}, dim(0)));
        },
        {x, i0}, {true, false}, "gather dim 0");
    // a transposed (non-contiguous) input
    gradcheck(
        [&](const std::vector<Tensor>& a) {
          return one(call1("gather", {a[0].t(), a[1]}, dim(0)));
        },
        {rnd({4, 3}, 2, dev), i0}, {true, false}, "gather of x.t()");

    Tensor iv = ids({2, 0, 2, 3}, {4}, dev);
    for (int64_t d : {0, 1, -2})
      gradcheck(
          [&](const std::vector<Tensor>& a) {
            return one(call1("index_select", {a[0], a[1]}, dim(d)));
          },
          {rnd({4, 5}, 3, dev), iv}, {true, false}, "index_select dim " + std::to_string(d));
    gradcheck(
        [&](const std::vector<Tensor>& a) {
          return one(call1("index_select", {a[0].slice(1, 0, 5, 2), a[1]}, dim(1)));
        },
        {rnd({2, 5}, 4, dev), ids({2, 2, 0}, {3}, dev)}, {true, false}, "index_select of a strided slice");
    gradcheck(
        [&](const std::vector<Tensor>& a) {
          return one(call1("index_select", {a[0], a[1]}, dim(0)));
        },
        {rnd({3, 2}, 5, dev), ids({1}, {}, dev)}, {true, false}, "index_select 0-d index");
    gradcheck(
        [&](const std::vector<Tensor>& a) {
          return one(call1("index_select", {a[0], a[1]}, dim(0)));
        },
        {rnd({}, 5, dev), ids({0}, {1}, dev)}, {true, false}, "index_select of a 0-d input");

    // analytic: counts of each index
    Tensor leaf = rnd({4}, 6, dev);
    leaf.set_requires_grad(true);
    Tensor y = call1("index_select", {leaf, ids({3, 3, 0, 3}, {4}, dev)}, dim(0));
    expect_close(host_values(autograd::grad({call1("sum", {y})}, {leaf})[0]), {1, 0, 0, 3}, 0, 0,
                 "index_select counts");
  }
}

TEST(AutogradIndexing, ScatterAddAndIndexAdd) {
  for (Device dev : devices()) {
    Tensor x = rnd({3, 4}, 7, dev);
    // src larger than index in both dims: its unused entries get zero gradient
    Tensor src = rnd({3, 5}, 8, dev);
    Tensor index = ids({1, 1, 3, 0, 2, 3}, {2, 3}, dev);
    for (int64_t d : {1, -1})
      gradcheck(
          [&](const std::vector<Tensor>& a) {
            return one(call1("scatter_add", {a[0], a[1], a[2]}, dim(d)));
          },
          {x, index, src}, {true, false, true}, "scatter_add dim " + std::to_string(d));
    gradcheck(
        [&](const std::vector<Tensor>& a) {
          return one(call1("scatter_add", {a[0], a[1], a[2].t()}, dim(0)));
        },
        {x, ids({2, 0, 1, 2}, {1, 4}, dev), rnd({4, 2}, 9, dev)}, {true, false, true},
        "scatter_add dim 0, transposed src");

    Tensor iv = ids({1, 3, 1}, {3}, dev);
    for (double alpha : {1.0, -2.5})
      for (int64_t d : {1, -1}) {
        Attrs at = {{"dim", d}, {"alpha", alpha}};
        gradcheck(
            [&](const std::vector<Tensor>& a) {
              return one(call1("index_add", {a[0], a[1], a[2]}, at));
            },
            {x, iv, rnd({3, 3}, 10, dev)}, {true, false, true}, "index_add alpha " + std::to_string(alpha));
      }
    gradcheck(
        [&](const std::vector<Tensor>& a) {
          return one(call1("index_add", {a[0], a[1], a[2]}, dim(0)));
        },
        {x, ids({2, 2}, {2}, dev), rnd({2, 4}, 11, dev)}, {true, false, true}, "index_add dim 0");

    // mixed dtypes: src f32 is promoted, its gradient comes back as f32
    Tensor xs = rnd({2, 3}, 12, dev);
    xs.set_requires_grad(true);
    Tensor s32 = make_tensor({1, 2, 3, 4}, {2, 2}, DType::f32, dev);
    s32.set_requires_grad(true);
    Tensor w = make_tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::f64, dev);
    Tensor y = call1("scatter_add", {xs, ids({2, 0, 1, 1}, {2, 2}, dev), s32}, dim(1));
    auto g = autograd::grad({call1("sum", {call1("mul", {y, w})})}, {xs, s32});
    EXPECT_EQ(g[1].dtype(), DType::f32);
    expect_close(host_values(g[0]), {1, 2, 3, 4, 5, 6}, 0, 0, "scatter_add d/dx");
    expect_close(host_values(g[1]), {3, 1, 5, 5}, 0, 0, "scatter_add d/dsrc = w[i][index[i][j]]");
  }
}

TEST(AutogradIndexing, ConcatStackSplit) {
  for (Device dev : devices()) {
    Tensor a = rnd({2, 3}, 13, dev), b = rnd({2, 1}, 14, dev), c = rnd({2, 2}, 15, dev);
    for (int64_t d : {1, -1})
      gradcheck(
          [&](const std::vector<Tensor>& in) {
            return one(call1("concat", {in[0], in[1], in[2]}, dim(d)));
          },
          {a, b, c}, {true, true, true}, "concat dim " + std::to_string(d));
    gradcheck(
        [&](const std::vector<Tensor>& in) {
          return one(call1("concat", {in[0].t(), in[1], in[2].t()}, dim(0)));
        },
        {a, rnd({1, 2}, 16, dev), c}, {true, true, true}, "concat dim 0 with transposed inputs");
    // a legacy 1-D empty input is skipped (and gets no gradient); a constant input gets none either
    Tensor empty = Tensor::zeros({0}, DType::f64, dev);
    gradcheck(
        [&](const std::vector<Tensor>& in) {
          return one(call1("concat", {in[0], in[1], in[2]}, dim(0)));
        },
        {a, empty, rnd({1, 3}, 17, dev)}, {true, false, true}, "concat with a skipped empty input");

    for (int64_t d : {0, 1, -1, 2})
      gradcheck(
          [&](const std::vector<Tensor>& in) {
            return one(call1("stack", {in[0], in[1]}, dim(d)));
          },
          {a, rnd({2, 3}, 18, dev)}, {true, true}, "stack dim " + std::to_string(d));

    Tensor x = rnd({3, 5}, 19, dev);
    Attrs sa = {{"sizes", Ints{2, 0, 3}}, {"dim", int64_t(-1)}};
    gradcheck([&](const std::vector<Tensor>& in) { return call("split", {in[0]}, sa); }, {x}, {true}, "split");
    // only some outputs used: the others contribute zeros
    gradcheck([&](const std::vector<Tensor>& in) { return one(call("split", {in[0]}, sa)[2]); }, {x}, {true},
              "split, last output only");
    gradcheck(
        [&](const std::vector<Tensor>& in) {
          return one(call("split", {in[0].t()}, {{"sizes", Ints{1, 4}}})[0]);
        },
        {x}, {true}, "split of x.t(), first output only");
  }
}

TEST(AutogradIndexing, PadAndPadBackward) {
  for (Device dev : devices()) {
    Tensor x = rnd({2, 3, 4}, 20, dev);
    struct Case {
      Ints pads;
      const char* mode;
    };
    const Case cases[] = {
        {{1, 2}, "constant"},      {{0, 1, 2, 0}, "constant"}, {{-1, 2, 1, -1}, "constant"},     {{2, 1}, "reflect"},
        {{1, 1, 2, 1}, "reflect"}, {{2, 3}, "replicate"},      {{1, 0, 1, 2, 0, 1}, "replicate"}};
    for (const auto& c : cases) {
      Attrs at = pad_attrs(c.pads, c.mode, 0.5);
      gradcheck([&](const std::vector<Tensor>& in) { return one(call1("pad", {in[0]}, at)); }, {x}, {true},
                std::string("pad ") + c.mode);
      gradcheck([&](const std::vector<Tensor>& in) { return one(call1("pad", {in[0].transpose(0, 2)}, at)); },
                {rnd({4, 3, 2}, 21, dev)}, {true}, std::string("pad of a transposed view, ") + c.mode);
      // pad_backward itself (linear in its input)
      Tensor padded = call1("pad", {x}, at);
      Attrs bt = {{"pads", c.pads}, {"mode", std::string(c.mode)}, {"input_shape", Ints{2, 3, 4}}};
      gradcheck([&](const std::vector<Tensor>& in) { return one(call1("pad_backward", {in[0]}, bt)); },
                {rnd(padded.shape(), 22, dev)}, {true}, std::string("pad_backward ") + c.mode);
    }
  }
}

TEST(AutogradIndexing, EmbeddingBackwardAndNonDifferentiable) {
  for (Device dev : devices()) {
    Tensor idx = ids({1, 3, 1, 0, 2, 3}, {2, 3}, dev);
    for (int64_t padding : {-1, 3}) {
      Attrs at = {{"num_weights", int64_t(4)}, {"padding_idx", padding}};
      gradcheck(
          [&](const std::vector<Tensor>& in) {
            return one(call1("embedding_backward", {in[0], in[1]}, at));
          },
          {rnd({2, 3, 2}, 23, dev), idx}, {true, false}, "embedding_backward padding " + std::to_string(padding));
      gradgradcheck(
          [&](const std::vector<Tensor>& in) {
            return one(sq(call1("embedding_backward", {in[0], in[1]}, at)));
          },
          {rnd({2, 3, 2}, 24, dev), idx}, {true, false}, "embedding_backward padding " + std::to_string(padding));
    }
    // random draws and creation ops record nothing
    Tensor p = make_tensor({0.2, 0.9}, {2}, DType::f64, dev);
    p.set_requires_grad(true);
    Tensor draw = call1("bernoulli", {p}, {{"seed", int64_t(3)}});
    EXPECT_FALSE(draw.requires_grad());
    EXPECT_THROW(autograd::grad({call1("sum", {draw})}, {p}), ValueError);
    // index inputs are integral and cannot ask for a gradient
    EXPECT_THROW(ids({0}, {1}, dev).set_requires_grad(true), DTypeError);
  }
}

TEST(AutogradIndexing, ViewChains) {
  for (Device dev : devices()) {
    Tensor x = rnd({4, 6}, 25, dev);
    using View = std::function<Tensor(const Tensor&)>;
    const std::pair<const char*, View> views[] = {
        {"t", [](const Tensor& t) { return t.t(); }},
        {"slice step 2", [](const Tensor& t) { return t.slice(1, 0, 4, 2); }},
        {"select", [](const Tensor& t) { return t.select(0, 1); }},
        {"select negative", [](const Tensor& t) { return t.select(-1, -2); }},
        {"expand",
         [](const Tensor& t) {
           return t.select(1, 2).unsqueeze(0).expand({3, 4});
         }},
        {"reshape",
         [](const Tensor& t) {
           return t.reshape({2, 12});
         }},
        {"reshape of t (copy)", [](const Tensor& t) { return t.t().reshape({-1}); }},
        {"unsqueeze/squeeze", [](const Tensor& t) { return t.unsqueeze(1).unsqueeze(-1).squeeze(1); }},
        {"permute",
         [](const Tensor& t) {
           return t.reshape({2, 2, 6}).permute({2, 0, 1});
         }},
        {"narrow of transpose", [](const Tensor& t) { return t.transpose(0, 1).narrow(0, 1, 3).flatten(); }}};
    for (const auto& [name, view] : views) {
      View v = view;
      gradcheck(
          [&](const std::vector<Tensor>& in) {
            return one(call1("mul", {v(in[0]), v(in[0])}));
          },
          {x}, {true}, name);
      gradgradcheck([&](const std::vector<Tensor>& in) { return one(sq(v(in[0]))); }, {x}, {true}, name);
    }
    // f32 round trip: finite differences in f32 need a large step; square is exact under central differences
    gradcheck([](const std::vector<Tensor>& in) { return one(sq(in[0].to(DType::f32)).to(DType::f64)); }, {x}, {true},
              "to(f32) round trip", 1e-2, 1e-4, 1e-3);
  }
}

TEST(AutogradIndexing, SecondOrder) {
  for (Device dev : devices()) {
    Tensor x = rnd({3, 4}, 26, dev);
    Tensor i1 = ids({0, 3, 3, 1, 2, 0}, {2, 3}, dev);
    gradgradcheck(
        [&](const std::vector<Tensor>& a) {
          return one(sq(call1("gather", {a[0], a[1]}, dim(1))));
        },
        {x, i1}, {true, false}, "gather");
    gradgradcheck(
        [&](const std::vector<Tensor>& a) {
          return one(sq(call1("index_select", {a[0], a[1]}, dim(-1))));
        },
        {x, ids({2, 0, 2}, {3}, dev)}, {true, false}, "index_select");
    gradgradcheck(
        [&](const std::vector<Tensor>& a) {
          return one(sq(call1("scatter_add", {a[0], a[1], a[2]}, dim(1))));
        },
        {x, i1, rnd({2, 4}, 27, dev)}, {true, false, true}, "scatter_add");
    gradgradcheck(
        [&](const std::vector<Tensor>& a) {
          return one(sq(call1("index_add", {a[0], a[1], a[2]}, {{"dim", int64_t(0)}, {"alpha", 2.0}})));
        },
        {x, ids({2, 2}, {2}, dev), rnd({2, 4}, 28, dev)}, {true, false, true}, "index_add");
    gradgradcheck(
        [&](const std::vector<Tensor>& a) {
          return one(sq(call1("concat", {a[0], a[1].t()}, dim(-1))));
        },
        {x, rnd({2, 3}, 29, dev)}, {true, true}, "concat");
    gradgradcheck(
        [&](const std::vector<Tensor>& a) {
          return one(sq(call1("stack", {a[0], a[1]}, dim(1))));
        },
        {x, rnd({3, 4}, 30, dev)}, {true, true}, "stack");
    gradgradcheck(
        [&](const std::vector<Tensor>& a) {
          return one(sq(call("split", {a[0]}, {{"sizes", Ints{1, 3}}, {"dim", int64_t(1)}})[1]));
        },
        {x}, {true}, "split");
    for (const char* mode : {"constant", "reflect", "replicate"}) {
      Attrs at = pad_attrs({1, 2, 2, 1}, mode, 0.25);
      gradgradcheck([&](const std::vector<Tensor>& a) { return one(sq(call1("pad", {a[0]}, at))); }, {x}, {true},
                    std::string("pad ") + mode);
    }
    gradgradcheck(
        [&](const std::vector<Tensor>& a) {
          return one(sq(call1("pad", {a[0]}, pad_attrs({-1, 1}, "constant"))));
        },
        {x}, {true}, "pad cropping");
  }
}
