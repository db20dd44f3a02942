// Tests for parse_host_port: the "host:port" address grammar.
#include <boost/test/unit_test.hpp>

#include "troupe/graph/cluster/host_port.hpp"

namespace troupe {
namespace {

bool mentions(const Status& status, std::string_view text) {
  return status.message().find(text) != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(host_port)

BOOST_AUTO_TEST_CASE(splits_names_and_ipv4_addresses) {
  auto named = parse_host_port("localhost:2222");
  BOOST_REQUIRE(named.ok());
  BOOST_TEST(named->first == "localhost");
  BOOST_TEST(named->second == 2222);

  auto ipv4 = parse_host_port("10.0.0.1:1");
  BOOST_REQUIRE(ipv4.ok());
  BOOST_TEST(ipv4->first == "10.0.0.1");
  BOOST_TEST(ipv4->second == 1);

  auto dashed = parse_host_port("worker-0.example_net.local:65535");
  BOOST_REQUIRE(dashed.ok());
  BOOST_TEST(dashed->first == "worker-0.example_net.local");
  BOOST_TEST(dashed->second == 65535);
}

BOOST_AUTO_TEST_CASE(port_zero_means_any_port) {
  auto any = parse_host_port("localhost:0");
  BOOST_REQUIRE(any.ok());
  BOOST_TEST(any->second == 0);
}

BOOST_AUTO_TEST_CASE(bracketed_ipv6_loses_its_brackets) {
  auto loopback = parse_host_port("[::1]:2222");
  BOOST_REQUIRE(loopback.ok());
  BOOST_TEST(loopback->first == "::1");
  BOOST_TEST(loopback->second == 2222);

  auto scoped = parse_host_port("[fe80::1%eth0]:80");
  BOOST_REQUIRE(scoped.ok());
  BOOST_TEST(scoped->first == "fe80::1%eth0");
  BOOST_TEST(scoped->second == 80);
}

BOOST_AUTO_TEST_CASE(missing_port_is_named) {
  for (std::string_view address : {"localhost", "localhost:", "[::1]", "[::1]:"}) {
    auto parsed = parse_host_port(address);
    BOOST_TEST(parsed.status().code() == Code::kInvalidArgument, address);
    BOOST_TEST(mentions(parsed.status(), "port"), parsed.status());
    BOOST_TEST(mentions(parsed.status(), fmt::format("'{}'", address)), parsed.status());
  }
}

BOOST_AUTO_TEST_CASE(rejects_bad_ports) {
  for (std::string_view address :
       {"h:65536", "h:123456", "h:-1", "h:+1", "h: 1", "h:1 ", "h:22a", "h:0x10"}) {
    auto parsed = parse_host_port(address);
    BOOST_TEST(parsed.status().code() == Code::kInvalidArgument, address);
    BOOST_TEST(mentions(parsed.status(), "port"), parsed.status());
    BOOST_TEST(mentions(parsed.status(), std::string(address)), parsed.status());
  }
  BOOST_TEST(mentions(parse_host_port("h:65536").status(), "above 65535"));
}

BOOST_AUTO_TEST_CASE(rejects_bad_hosts) {
  struct Case {
    std::string_view address;
    std::string_view says;
  };
  for (const Case& c :
       {Case{":2222", "host is empty"}, Case{"", "no port"},
        Case{"::1:2222", "IPv6 hosts in brackets"}, Case{"a:1:2", "more than one ':'"},
        Case{"[::1:1", "unterminated"}, Case{"[]:1", "not an IPv6 address"},
        Case{"[abc]:1", "not an IPv6"}, Case{"[::1]2222", "no port"}, Case{"h/x:1", "contains '/'"},
        Case{"my host:1", "contains ' '"}}) {
    auto parsed = parse_host_port(c.address);
    BOOST_TEST(parsed.status().code() == Code::kInvalidArgument, c.address);
    BOOST_TEST(mentions(parsed.status(), c.says), parsed.status());
    BOOST_TEST(mentions(parsed.status(), fmt::format("'{}'", c.address)), parsed.status());
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
