#include "host/framework/selectors.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "host/model/interner.h"

namespace schedhost::framework {
namespace {

schedhost_id Id(std::string_view s) { return model::Interner::Global().Intern(s); }

struct Labels {
  std::vector<schedhost_label> items;
  Labels(std::initializer_list<std::pair<std::string, std::string>> kv) {
    for (const auto& [k, v] : kv) items.push_back({Id(k), Id(v)});
    std::sort(items.begin(), items.end(), [](auto& a, auto& b) { return a.key < b.key; });
  }
  schedhost_labels view() const { return {items.data(), items.size()}; }
};

struct Req {
  std::vector<schedhost_id> values;
  schedhost_requirement r{};
  Req(std::string key, int32_t op, std::vector<std::string> vals) {
    for (const auto& v : vals) values.push_back(Id(v));
    r.key = Id(key);
    r.op = op;
    r.values = values.data();
    r.values_len = values.size();
  }
};

TEST(LabelSelectorTest, Operators) {
  Labels labels{{"app", "web"}, {"tier", "front"}};
  struct Case {
    std::string key;
    int32_t op;
    std::vector<std::string> values;
    bool want;
  };
  for (const Case& c : std::vector<Case>{
           {"app", SCHEDHOST_OP_IN, {"web", "api"}, true},
           {"app", SCHEDHOST_OP_IN, {"api"}, false},
           {"app", SCHEDHOST_OP_NOT_IN, {"api"}, true},
           {"missing", SCHEDHOST_OP_NOT_IN, {"x"}, true},  // NotIn matches an absent key
           {"app", SCHEDHOST_OP_EXISTS, {}, true},
           {"missing", SCHEDHOST_OP_EXISTS, {}, false},
           {"missing", SCHEDHOST_OP_DOES_NOT_EXIST, {}, true},
           {"app", SCHEDHOST_OP_DOES_NOT_EXIST, {}, false},
       }) {
    Req req(c.key, c.op, c.values);
    schedhost_label_selector sel{&req.r, 1};
    EXPECT_EQ(LabelSelectorMatches(&sel, labels.view()), c.want) << c.key << " op " << c.op;
  }
  schedhost_label_selector empty{nullptr, 0};
  EXPECT_TRUE(LabelSelectorMatches(&empty, labels.view()));  // empty selector: everything
  EXPECT_FALSE(LabelSelectorMatches(nullptr, labels.view()));  // nil selector: nothing
}

TEST(NodeSelectorTermTest, ExpressionsFieldsAndIntegers) {
  Labels labels{{"zone", "a"}, {"cores", "16"}};
  schedhost_node_view node{};
  node.struct_size = sizeof(node);
  node.name = {"node-1", 6};
  node.name_id = Id("node-1");
  node.labels = labels.view();
  struct Case {
    std::vector<Req*> exprs;
    std::vector<Req*> fields;
    bool want;
  };
  Req in_zone("zone", SCHEDHOST_OP_IN, {"a", "b"});
  Req gt8("cores", SCHEDHOST_OP_GT, {"8"});
  Req lt8("cores", SCHEDHOST_OP_LT, {"8"});
  Req gt_bad("zone", SCHEDHOST_OP_GT, {"8"});  // "a" is not an integer: no match
  Req name_in("metadata.name", SCHEDHOST_OP_IN, {"node-1"});
  Req name_not("metadata.name", SCHEDHOST_OP_NOT_IN, {"node-1"});
  for (const Case& c : std::vector<Case>{{{&in_zone}, {}, true},
                                         {{&in_zone, &gt8}, {}, true},
                                         {{&in_zone, &lt8}, {}, false},
                                         {{&gt_bad}, {}, false},
                                         {{}, {&name_in}, true},
                                         {{}, {&name_not}, false},
                                         {{&in_zone}, {&name_in}, true},
                                         {{}, {}, false}}) {  // an empty term matches nothing
    std::vector<schedhost_requirement> e, f;
    for (auto* r : c.exprs) e.push_back(r->r);
    for (auto* r : c.fields) f.push_back(r->r);
    schedhost_node_selector_term term{e.data(), e.size(), f.data(), f.size()};
    EXPECT_EQ(NodeSelectorTermMatches(term, node), c.want);
  }
}

}  // namespace
}  // namespace schedhost::framework
