// ValueNode: an owned, read-only tree of JSON-like values (tables, arrays, strings, integers,
// floats, booleans), each with the place it came from. Plugin arguments (a TOML table) and
// objects of the API kinds plugins declare (a decoded manifest or API object) are both kept as
// ValueNode trees, so plugins read both through one family of accessors: the config_* entries
// of the host table (host/config/config_tree.h), which take a `const schedhost_config*` that is
// really a `const ValueNode*`. Header-only: the config library uses it without linking model.
#pragma once

#include <schedhost/plugin.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace schedhost::model {

// ValueNode is one value; tables keep their entries in input order.
struct ValueNode {
  // kind is a schedhost_config_kind value.
  int32_t kind = SCHEDHOST_CONFIG_NONE;
  // key is this node's key in its parent table ("" for array elements and the root).
  std::string key;
  // children are a table's entries (input order) or an array's elements.
  std::vector<ValueNode> children;
  // string_value holds the value of a string node.
  std::string string_value;
  // int_value holds the value of an integer node.
  int64_t int_value = 0;
  // float_value holds the value of a float node.
  double float_value = 0;
  // bool_value holds the value of a boolean node.
  bool bool_value = false;
  // location says where the value is written: "file:line:col" in a config file, or the object
  // it belongs to, "<Kind> <namespace/name>" ("" when unknown).
  std::string location;
  // key_location is "file:line:col" of the node's key ("" for array elements, objects' fields
  // and when unknown).
  std::string key_location;

  // Find returns the child of a table with key `child_key`, or nullptr.
  const ValueNode* Find(std::string_view child_key) const {
    if (kind != SCHEDHOST_CONFIG_TABLE) return nullptr;
    for (const ValueNode& child : children) {
      if (child.key == child_key) return &child;
    }
    return nullptr;
  }
};

}  // namespace schedhost::model
