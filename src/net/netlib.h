/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The netlink libraries, called through tables that cordon_netlib_load
 * (netlib.c) fills with dlopen: cordon does not link them, so that a
 * default-deny start (which uses none of them) does not load, relocate
 * and map four libraries at every exec (docs/benchmarks.md, "Where a
 * start's time goes").
 *
 *   nft   libmnl and libnftnl: the rulesets (nft*.c), cordon-nethelper
 *   link  libnl-3 and libnl-route-3: links, addresses, routes (link.c,
 *         gateway.c)
 *
 * Every file of src/net that calls these libraries includes this header,
 * and only through it: it includes the libraries' headers, then makes
 * each function's name stand for its table entry, so the code calls
 * nftnl_rule_alloc() as it always did. A library header included after
 * this one would declare `netlib_nft.nftnl_...` and fail to compile; a
 * function missing from the lists below fails cordon's link (it is not
 * linked against the library). Nothing may call through a table before
 * cordon_netlib_load has filled it (the public functions check,
 * netlib_ready).
 */
#ifndef CORDON_NET_NETLIB_H
#define CORDON_NET_NETLIB_H

/* glibc's netinet/in.h (through net.h) must come before linux/in.h. */
#include "cordon/net.h"

#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/object.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <libnftnl/udata.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/link/veth.h>
#include <netlink/route/route.h>

#define NETLIB_NFT_FUNCTIONS(X)                                                              \
	X(mnl_attr_get_len) X(mnl_attr_get_payload) X(mnl_attr_get_payload_len)              \
	X(mnl_attr_get_str) X(mnl_attr_get_type) X(mnl_attr_get_u32) X(mnl_attr_nest_end)     \
	X(mnl_attr_nest_start) X(mnl_attr_next) X(mnl_attr_ok) X(mnl_attr_parse_payload)      \
	X(mnl_attr_put) X(mnl_attr_validate) X(mnl_cb_run) X(mnl_nlmsg_get_payload)           \
	X(mnl_nlmsg_get_payload_len) X(mnl_nlmsg_get_payload_offset)                          \
	X(mnl_nlmsg_get_payload_tail) X(mnl_nlmsg_next) X(mnl_nlmsg_ok) X(mnl_socket_bind)    \
	X(mnl_socket_close) X(mnl_socket_fdopen) X(mnl_socket_get_fd)                         \
	X(mnl_socket_get_portid) X(mnl_socket_open2) X(mnl_socket_recvfrom)                   \
	X(mnl_socket_sendto) X(mnl_socket_setsockopt)                                         \
	X(nftnl_batch_begin) X(nftnl_batch_end) X(nftnl_chain_alloc) X(nftnl_chain_free)      \
	X(nftnl_chain_nlmsg_build_payload) X(nftnl_chain_set_s32) X(nftnl_chain_set_str)      \
	X(nftnl_chain_set_u32) X(nftnl_expr_alloc) X(nftnl_expr_get_str) X(nftnl_expr_get_u64) \
	X(nftnl_expr_set) X(nftnl_expr_set_str) X(nftnl_expr_set_u32) X(nftnl_nlmsg_build_hdr) \
	X(nftnl_obj_alloc) X(nftnl_obj_free) X(nftnl_obj_get_u64)                             \
	X(nftnl_obj_nlmsg_build_payload) X(nftnl_obj_nlmsg_parse) X(nftnl_obj_set_str)        \
	X(nftnl_obj_set_u32) X(nftnl_rule_add_expr) X(nftnl_rule_alloc) X(nftnl_rule_free)    \
	X(nftnl_rule_get_str) X(nftnl_rule_nlmsg_build_payload) X(nftnl_rule_set_str)         \
	X(nftnl_set_alloc) X(nftnl_set_elem_add) X(nftnl_set_elem_alloc)                      \
	X(nftnl_set_elem_expr_foreach) X(nftnl_set_elem_get) X(nftnl_set_elem_get_u32)        \
	X(nftnl_set_elem_get_u64) X(nftnl_set_elem_is_set) X(nftnl_set_elem_set)              \
	X(nftnl_set_elem_set_u32) X(nftnl_set_elem_set_u64) X(nftnl_set_elems_iter_create)    \
	X(nftnl_set_elems_iter_destroy) X(nftnl_set_elems_iter_next)                          \
	X(nftnl_set_elems_nlmsg_build_payload) X(nftnl_set_elems_nlmsg_parse)                 \
	X(nftnl_set_free) X(nftnl_set_get_u32) X(nftnl_set_nlmsg_build_payload)               \
	X(nftnl_set_nlmsg_parse) X(nftnl_set_set_str) X(nftnl_set_set_u32)                    \
	X(nftnl_table_alloc) X(nftnl_table_free) X(nftnl_table_get_data)                      \
	X(nftnl_table_nlmsg_build_payload) X(nftnl_table_nlmsg_parse) X(nftnl_table_set_data) \
	X(nftnl_table_set_str) X(nftnl_table_set_u32) X(nftnl_udata_buf_alloc)                \
	X(nftnl_udata_buf_data) X(nftnl_udata_buf_free) X(nftnl_udata_buf_len)                \
	X(nftnl_udata_get) X(nftnl_udata_len) X(nftnl_udata_parse) X(nftnl_udata_put_strz)    \
	X(nftnl_udata_type)

#define NETLIB_LINK_FUNCTIONS(X)                                                             \
	X(nl_addr_build) X(nl_addr_get_prefixlen) X(nl_addr_put) X(nl_addr_set_prefixlen)     \
	X(nl_cache_free) X(nl_cache_get_first) X(nl_cache_get_next) X(nl_connect)             \
	X(nl_geterror) X(nl_socket_alloc) X(nl_socket_free)                                   \
	X(rtnl_addr_add) X(rtnl_addr_alloc) X(rtnl_addr_put) X(rtnl_addr_set_flags)           \
	X(rtnl_addr_set_ifindex) X(rtnl_addr_set_local) X(rtnl_link_add) X(rtnl_link_alloc)   \
	X(rtnl_link_change) X(rtnl_link_get_ifindex) X(rtnl_link_get_kernel) X(rtnl_link_put) \
	X(rtnl_link_set_flags) X(rtnl_link_set_group) X(rtnl_link_set_name)                   \
	X(rtnl_link_set_ns_fd) X(rtnl_link_set_ns_pid) X(rtnl_link_veth_alloc)                \
	X(rtnl_link_veth_get_peer) X(rtnl_route_add) X(rtnl_route_add_nexthop)                \
	X(rtnl_route_alloc) X(rtnl_route_alloc_cache) X(rtnl_route_get_dst)                   \
	X(rtnl_route_get_table) X(rtnl_route_nh_alloc) X(rtnl_route_nh_free)                  \
	X(rtnl_route_nh_set_gateway) X(rtnl_route_nh_set_ifindex) X(rtnl_route_put)           \
	X(rtnl_route_set_dst) X(rtnl_route_set_family)

#define NETLIB_ENTRY(name) typeof(name) *name;
struct netlib_nft {
	NETLIB_NFT_FUNCTIONS(NETLIB_ENTRY)
};
struct netlib_link {
	NETLIB_LINK_FUNCTIONS(NETLIB_ENTRY)
};
#undef NETLIB_ENTRY

extern struct netlib_nft netlib_nft;
extern struct netlib_link netlib_link;

/*
 * 0 when the tables of LIBS (CORDON_NETLIB_*) are filled, else
 * CORDON_E_INTERNAL into err naming WHAT: a caller that did not load
 * them first is a bug, and it fails closed rather than jumping to NULL.
 */
int netlib_ready(unsigned libs, const char *what, struct cordon_error *err);

/*
 * A program linked against the libraries fills a table itself and says
 * so here: cordon-nethelper, whose file capabilities make it the
 * dynamic loader's business alone which files it maps (src/helper).
 */
void netlib_bound(unsigned libs);

/* netlib.c itself names the real functions. */
#ifndef NETLIB_NO_REDIRECT
#define mnl_attr_get_len netlib_nft.mnl_attr_get_len
#define mnl_attr_get_payload netlib_nft.mnl_attr_get_payload
#define mnl_attr_get_payload_len netlib_nft.mnl_attr_get_payload_len
#define mnl_attr_get_str netlib_nft.mnl_attr_get_str
#define mnl_attr_get_type netlib_nft.mnl_attr_get_type
#define mnl_attr_get_u32 netlib_nft.mnl_attr_get_u32
#define mnl_attr_nest_end netlib_nft.mnl_attr_nest_end
#define mnl_attr_nest_start netlib_nft.mnl_attr_nest_start
#define mnl_attr_next netlib_nft.mnl_attr_next
#define mnl_attr_ok netlib_nft.mnl_attr_ok
#define mnl_attr_parse_payload netlib_nft.mnl_attr_parse_payload
#define mnl_attr_put netlib_nft.mnl_attr_put
#define mnl_attr_validate netlib_nft.mnl_attr_validate
#define mnl_cb_run netlib_nft.mnl_cb_run
#define mnl_nlmsg_get_payload netlib_nft.mnl_nlmsg_get_payload
#define mnl_nlmsg_get_payload_len netlib_nft.mnl_nlmsg_get_payload_len
#define mnl_nlmsg_get_payload_offset netlib_nft.mnl_nlmsg_get_payload_offset
#define mnl_nlmsg_get_payload_tail netlib_nft.mnl_nlmsg_get_payload_tail
#define mnl_nlmsg_next netlib_nft.mnl_nlmsg_next
#define mnl_nlmsg_ok netlib_nft.mnl_nlmsg_ok
#define mnl_socket_bind netlib_nft.mnl_socket_bind
#define mnl_socket_close netlib_nft.mnl_socket_close
#define mnl_socket_fdopen netlib_nft.mnl_socket_fdopen
#define mnl_socket_get_fd netlib_nft.mnl_socket_get_fd
#define mnl_socket_get_portid netlib_nft.mnl_socket_get_portid
#define mnl_socket_open2 netlib_nft.mnl_socket_open2
#define mnl_socket_recvfrom netlib_nft.mnl_socket_recvfrom
#define mnl_socket_sendto netlib_nft.mnl_socket_sendto
#define mnl_socket_setsockopt netlib_nft.mnl_socket_setsockopt
#define nftnl_batch_begin netlib_nft.nftnl_batch_begin
#define nftnl_batch_end netlib_nft.nftnl_batch_end
#define nftnl_chain_alloc netlib_nft.nftnl_chain_alloc
#define nftnl_chain_free netlib_nft.nftnl_chain_free
#define nftnl_chain_nlmsg_build_payload netlib_nft.nftnl_chain_nlmsg_build_payload
#define nftnl_chain_set_s32 netlib_nft.nftnl_chain_set_s32
#define nftnl_chain_set_str netlib_nft.nftnl_chain_set_str
#define nftnl_chain_set_u32 netlib_nft.nftnl_chain_set_u32
#define nftnl_expr_alloc netlib_nft.nftnl_expr_alloc
#define nftnl_expr_get_str netlib_nft.nftnl_expr_get_str
#define nftnl_expr_get_u64 netlib_nft.nftnl_expr_get_u64
#define nftnl_expr_set netlib_nft.nftnl_expr_set
#define nftnl_expr_set_str netlib_nft.nftnl_expr_set_str
#define nftnl_expr_set_u32 netlib_nft.nftnl_expr_set_u32
#define nftnl_nlmsg_build_hdr netlib_nft.nftnl_nlmsg_build_hdr
#define nftnl_obj_alloc netlib_nft.nftnl_obj_alloc
#define nftnl_obj_free netlib_nft.nftnl_obj_free
#define nftnl_obj_get_u64 netlib_nft.nftnl_obj_get_u64
#define nftnl_obj_nlmsg_build_payload netlib_nft.nftnl_obj_nlmsg_build_payload
#define nftnl_obj_nlmsg_parse netlib_nft.nftnl_obj_nlmsg_parse
#define nftnl_obj_set_str netlib_nft.nftnl_obj_set_str
#define nftnl_obj_set_u32 netlib_nft.nftnl_obj_set_u32
#define nftnl_rule_add_expr netlib_nft.nftnl_rule_add_expr
#define nftnl_rule_alloc netlib_nft.nftnl_rule_alloc
#define nftnl_rule_free netlib_nft.nftnl_rule_free
#define nftnl_rule_get_str netlib_nft.nftnl_rule_get_str
#define nftnl_rule_nlmsg_build_payload netlib_nft.nftnl_rule_nlmsg_build_payload
#define nftnl_rule_set_str netlib_nft.nftnl_rule_set_str
#define nftnl_set_alloc netlib_nft.nftnl_set_alloc
#define nftnl_set_elem_add netlib_nft.nftnl_set_elem_add
#define nftnl_set_elem_alloc netlib_nft.nftnl_set_elem_alloc
#define nftnl_set_elem_expr_foreach netlib_nft.nftnl_set_elem_expr_foreach
#define nftnl_set_elem_get netlib_nft.nftnl_set_elem_get
#define nftnl_set_elem_get_u32 netlib_nft.nftnl_set_elem_get_u32
#define nftnl_set_elem_get_u64 netlib_nft.nftnl_set_elem_get_u64
#define nftnl_set_elem_is_set netlib_nft.nftnl_set_elem_is_set
#define nftnl_set_elem_set netlib_nft.nftnl_set_elem_set
#define nftnl_set_elem_set_u32 netlib_nft.nftnl_set_elem_set_u32
#define nftnl_set_elem_set_u64 netlib_nft.nftnl_set_elem_set_u64
#define nftnl_set_elems_iter_create netlib_nft.nftnl_set_elems_iter_create
#define nftnl_set_elems_iter_destroy netlib_nft.nftnl_set_elems_iter_destroy
#define nftnl_set_elems_iter_next netlib_nft.nftnl_set_elems_iter_next
#define nftnl_set_elems_nlmsg_build_payload netlib_nft.nftnl_set_elems_nlmsg_build_payload
#define nftnl_set_elems_nlmsg_parse netlib_nft.nftnl_set_elems_nlmsg_parse
#define nftnl_set_free netlib_nft.nftnl_set_free
#define nftnl_set_get_u32 netlib_nft.nftnl_set_get_u32
#define nftnl_set_nlmsg_build_payload netlib_nft.nftnl_set_nlmsg_build_payload
#define nftnl_set_nlmsg_parse netlib_nft.nftnl_set_nlmsg_parse
#define nftnl_set_set_str netlib_nft.nftnl_set_set_str
#define nftnl_set_set_u32 netlib_nft.nftnl_set_set_u32
#define nftnl_table_alloc netlib_nft.nftnl_table_alloc
#define nftnl_table_free netlib_nft.nftnl_table_free
#define nftnl_table_get_data netlib_nft.nftnl_table_get_data
#define nftnl_table_nlmsg_build_payload netlib_nft.nftnl_table_nlmsg_build_payload
#define nftnl_table_nlmsg_parse netlib_nft.nftnl_table_nlmsg_parse
#define nftnl_table_set_data netlib_nft.nftnl_table_set_data
#define nftnl_table_set_str netlib_nft.nftnl_table_set_str
#define nftnl_table_set_u32 netlib_nft.nftnl_table_set_u32
#define nftnl_udata_buf_alloc netlib_nft.nftnl_udata_buf_alloc
#define nftnl_udata_buf_data netlib_nft.nftnl_udata_buf_data
#define nftnl_udata_buf_free netlib_nft.nftnl_udata_buf_free
#define nftnl_udata_buf_len netlib_nft.nftnl_udata_buf_len
#define nftnl_udata_get netlib_nft.nftnl_udata_get
#define nftnl_udata_len netlib_nft.nftnl_udata_len
#define nftnl_udata_parse netlib_nft.nftnl_udata_parse
#define nftnl_udata_put_strz netlib_nft.nftnl_udata_put_strz
#define nftnl_udata_type netlib_nft.nftnl_udata_type
#define nl_addr_build netlib_link.nl_addr_build
#define nl_addr_get_prefixlen netlib_link.nl_addr_get_prefixlen
#define nl_addr_put netlib_link.nl_addr_put
#define nl_addr_set_prefixlen netlib_link.nl_addr_set_prefixlen
#define nl_cache_free netlib_link.nl_cache_free
#define nl_cache_get_first netlib_link.nl_cache_get_first
#define nl_cache_get_next netlib_link.nl_cache_get_next
#define nl_connect netlib_link.nl_connect
#define nl_geterror netlib_link.nl_geterror
#define nl_socket_alloc netlib_link.nl_socket_alloc
#define nl_socket_free netlib_link.nl_socket_free
#define rtnl_addr_add netlib_link.rtnl_addr_add
#define rtnl_addr_alloc netlib_link.rtnl_addr_alloc
#define rtnl_addr_put netlib_link.rtnl_addr_put
#define rtnl_addr_set_flags netlib_link.rtnl_addr_set_flags
#define rtnl_addr_set_ifindex netlib_link.rtnl_addr_set_ifindex
#define rtnl_addr_set_local netlib_link.rtnl_addr_set_local
#define rtnl_link_add netlib_link.rtnl_link_add
#define rtnl_link_alloc netlib_link.rtnl_link_alloc
#define rtnl_link_change netlib_link.rtnl_link_change
#define rtnl_link_get_ifindex netlib_link.rtnl_link_get_ifindex
#define rtnl_link_get_kernel netlib_link.rtnl_link_get_kernel
#define rtnl_link_put netlib_link.rtnl_link_put
#define rtnl_link_set_flags netlib_link.rtnl_link_set_flags
#define rtnl_link_set_group netlib_link.rtnl_link_set_group
#define rtnl_link_set_name netlib_link.rtnl_link_set_name
#define rtnl_link_set_ns_fd netlib_link.rtnl_link_set_ns_fd
#define rtnl_link_set_ns_pid netlib_link.rtnl_link_set_ns_pid
#define rtnl_link_veth_alloc netlib_link.rtnl_link_veth_alloc
#define rtnl_link_veth_get_peer netlib_link.rtnl_link_veth_get_peer
#define rtnl_route_add netlib_link.rtnl_route_add
#define rtnl_route_add_nexthop netlib_link.rtnl_route_add_nexthop
#define rtnl_route_alloc netlib_link.rtnl_route_alloc
#define rtnl_route_alloc_cache netlib_link.rtnl_route_alloc_cache
#define rtnl_route_get_dst netlib_link.rtnl_route_get_dst
#define rtnl_route_get_table netlib_link.rtnl_route_get_table
#define rtnl_route_nh_alloc netlib_link.rtnl_route_nh_alloc
#define rtnl_route_nh_free netlib_link.rtnl_route_nh_free
#define rtnl_route_nh_set_gateway netlib_link.rtnl_route_nh_set_gateway
#define rtnl_route_nh_set_ifindex netlib_link.rtnl_route_nh_set_ifindex
#define rtnl_route_put netlib_link.rtnl_route_put
#define rtnl_route_set_dst netlib_link.rtnl_route_set_dst
#define rtnl_route_set_family netlib_link.rtnl_route_set_family
#endif

#endif
