// OrderedDict: a map that remembers insertion order, like torch::OrderedDict.
// Modules keep their parameters, buffers and children in one, and
// state_dict() returns one, so iteration order is registration order (the
// order PyTorch users expect from named_parameters() and saved files).
// Items are std::pair<Key, Value>, so `for (auto& [name, t] : dict)` works.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "oar/error.h"

namespace oar {

template <class Key, class Value>
class OrderedDict {
 public:
  using Item = std::pair<Key, Value>;
  using iterator = typename std::vector<Item>::iterator;
  using const_iterator = typename std::vector<Item>::const_iterator;

  OrderedDict() = default;
  OrderedDict(std::initializer_list<Item> items) {
    for (const auto& it : items) insert(it.first, it.second);
  }

  // Adds a new key; a duplicate key is a ValueError (as in torch::OrderedDict).
  Value& insert(const Key& key, Value value) {
    if (index_.count(key)) throw ValueError(str("OrderedDict: key '", key, "' already present"));
    index_.emplace(key, items_.size());
    items_.emplace_back(key, std::move(value));
    return items_.back().second;
  }
  // Adds the key or replaces its value, keeping its position.
  Value& insert_or_assign(const Key& key, Value value) {
    if (Value* v = find(key)) return *v = std::move(value);
    return insert(key, std::move(value));
  }
  Value* find(const Key& key) {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].second;
  }
  const Value* find(const Key& key) const {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].second;
  }
  bool contains(const Key& key) const { return index_.count(key) != 0; }
  // Throws IndexError naming the key when it is absent.
  Value& operator[](const Key& key) { return at(key); }
  const Value& operator[](const Key& key) const { return at(key); }
  Value& at(const Key& key) {
    if (Value* v = find(key)) return *v;
    throw IndexError(str("OrderedDict: no key '", key, "'"));
  }
  const Value& at(const Key& key) const {
    if (const Value* v = find(key)) return *v;
    throw IndexError(str("OrderedDict: no key '", key, "'"));
  }
  // Removes a key (order of the others is kept); returns whether it was present.
  bool erase(const Key& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return false;
    items_.erase(items_.begin() + std::ptrdiff_t(it->second));
    rebuild_index();
    return true;
  }
  void clear() {
    items_.clear();
    index_.clear();
  }

  size_t size() const { return items_.size(); }
  bool is_empty() const { return items_.empty(); }
  bool empty() const { return items_.empty(); }
  const std::vector<Item>& items() const { return items_; }
  std::vector<Key> keys() const {
    std::vector<Key> out;
    out.reserve(items_.size());
    for (const auto& it : items_) out.push_back(it.first);
    return out;
  }
  std::vector<Value> values() const {
    std::vector<Value> out;
    out.reserve(items_.size());
    for (const auto& it : items_) out.push_back(it.second);
    return out;
  }

  iterator begin() { return items_.begin(); }
  iterator end() { return items_.end(); }
  const_iterator begin() const { return items_.begin(); }
  const_iterator end() const { return items_.end(); }

 private:
  void rebuild_index() {
    index_.clear();
    for (size_t i = 0; i < items_.size(); ++i) index_.emplace(items_[i].first, i);
  }

  std::vector<Item> items_;
  std::unordered_map<Key, size_t> index_;
};

class Tensor;
// Named tensors in order: what Module::state_dict() returns and oar::save writes.
using StateDict = OrderedDict<std::string, Tensor>;

}  // namespace oar
