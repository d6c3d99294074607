// The autograd side of oar.Tensor that PyTorch code relies on for object
// identity: requires_grad_() returns the tensor itself, `t.grad is t.grad`,
// register_hook returns a removable handle, and _version counts in-place
// writes.
#include <memory>
#include <unordered_map>

#include "bindings.h"

namespace oar::py {

namespace {

// One Python object per gradient, so repeated reads of .grad give the same
// object. Entries are keyed by the tensor whose .grad it is and hold the
// object strongly (a weak-referenceable Tensor type would cost every tensor
// creation); an entry goes when .grad changes, is set to None, or its tensor
// dies (swept as the table grows).
class GradObjects {
 public:
  nb::object get(const Tensor& owner, const Tensor& g) {
    auto it = objects_.find(owner.impl_ptr().get());
    if (it != objects_.end() && !it->second.owner.expired() &&
        nb::inst_ptr<Tensor>(it->second.object)->impl_ptr() == g.impl_ptr())
      return it->second.object;
    nb::object o = nb::cast(g);
    // A dead owner's entry holds its gradient until a sweep: one runs as the
    // table grows and every 64 new objects, so that memory comes back soon.
    if (objects_.size() >= sweep_at_ || ++made_since_sweep_ >= 64) sweep();
    objects_[owner.impl_ptr().get()] = Entry{owner.impl_ptr(), o};
    return o;
  }
  // `x.grad = g` keeps g's object: `x.grad is g`.
  void put(const Tensor& owner, nb::handle object) {
    if (objects_.size() >= sweep_at_) sweep();
    objects_[owner.impl_ptr().get()] = Entry{owner.impl_ptr(), nb::borrow(object)};
  }
  void forget(const Tensor& owner) { objects_.erase(owner.impl_ptr().get()); }
  void clear() { objects_.clear(); }

 private:
  struct Entry {
    std::weak_ptr<TensorImpl> owner;
    nb::object object;
  };
  void sweep() {
    for (auto it = objects_.begin(); it != objects_.end();)
      it = it->second.owner.expired() ? objects_.erase(it) : std::next(it);
    sweep_at_ = std::max<size_t>(64, 2 * objects_.size());
    made_since_sweep_ = 0;
  }
  std::unordered_map<const TensorImpl*, Entry> objects_;  // the GIL guards it
  size_t sweep_at_ = 64;
  size_t made_since_sweep_ = 0;
};

GradObjects& grad_objects() {
  static GradObjects* objects = new GradObjects();  // outlives interpreter teardown
  return *objects;
}

}  // namespace

void bind_tensor_autograd(nb::class_<Tensor>& t) {
  // The table's objects are released before the interpreter finalises.
  nb::module_::import_("atexit").attr("register")(nb::cpp_function([] { grad_objects().clear(); }));
  nb::class_<HookHandle>(t, "_HookHandle")
      .def("remove", &HookHandle::remove)
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__exit__", [](HookHandle& h, nb::args) { h.remove(); });

  t.def("requires_grad_", [](nb::handle self, bool r) {
     nb::inst_ptr<Tensor>(self)->set_requires_grad(r);
     return nb::borrow(self);
   }, nb::arg("requires_grad") = true)
      .def_prop_rw("grad", [](const Tensor& x) -> nb::object {
        Tensor g = x.grad();
        if (!g.defined()) return nb::none();
        return grad_objects().get(x, g);
      }, [](Tensor& x, nb::handle g) {
        x.set_grad(g.is_none() ? Tensor() : nb::cast<Tensor>(g));
        if (g.is_none()) grad_objects().forget(x);
        else grad_objects().put(x, g);
      },
         nb::arg("value").none())
      .def("register_hook", [](const Tensor& x, nb::callable fn) {
        auto slot = std::make_shared<nb::object>(fn);
        x.register_hook([slot](const Tensor& g) -> Tensor {
          nb::gil_scoped_acquire gil;
          if (!slot->is_valid()) return Tensor();
          nb::object r = (*slot)(g);
          return r.is_none() ? Tensor() : nb::cast<Tensor>(r);
        });
        return HookHandle{slot};
      })
      .def_prop_ro("_version", [](const Tensor& x) { return x.version(); })
      // x._update_(f(x)): the in-place form of an op (relu_, inplace=True). A
      // result only this call holds (a temporary) is handed over whole, so
      // Tensor::update_ can take its memory instead of copying.
      .def("_update_", [](nb::handle self, nb::handle result) {
        Tensor& x = *nb::inst_ptr<Tensor>(self);
        if (!nb::isinstance<Tensor>(result)) throw nb::type_error("_update_ expects a Tensor");
        Tensor& r = *nb::inst_ptr<Tensor>(result);
        Tensor value = Py_REFCNT(result.ptr()) <= 1 ? std::move(r) : r;
        x.update_(std::move(value));
        return nb::borrow(self);
      })
      // What a Python-composed in-place op computes from (Tensor::inplace_source).
      .def("_inplace_src", [](nb::handle self, nb::args others) -> nb::object {
        const Tensor& x = *nb::inst_ptr<Tensor>(self);
        std::vector<Tensor> ts;
        for (nb::handle o : others)
          if (nb::isinstance<Tensor>(o)) ts.push_back(*nb::inst_ptr<Tensor>(o));
        Tensor src = x.inplace_source(ts);
        return src.is_same(x) ? nb::borrow(self) : nb::cast(std::move(src));
      });
}

}  // namespace oar::py
