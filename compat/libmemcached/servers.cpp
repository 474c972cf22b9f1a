// Server lists and instances: memcached_server_add*, memcached_servers_parse, the
// memcached_server_st lists callers build, the cursor, and what an instance tells.
#include "handle.hpp"

#include <cstdlib>
#include <cstring>
#include <string>

using folsom::compat::Handle;
using folsom::compat::handle_of;
using folsom::compat::ServerEntry;

namespace folsom::compat {

memcached_return_t add_server(Handle& h, std::string_view host, std::uint16_t port,
                              std::uint32_t weight, memcached_connection_t type, WeightRule rule) {
    if (type == MEMCACHED_CONNECTION_UDP)
        return set_error(h, MEMCACHED_NOT_SUPPORTED,
                         "UDP servers are not supported by folsom's libmemcached drop-in");
    if (host.size() >= MEMCACHED_NI_MAXHOST)
        return set_error(h, MEMCACHED_INVALID_ARGUMENTS, "host name too long");
    auto e = std::make_unique<ServerEntry>();
    e->host.assign(host);
    e->port = type == MEMCACHED_CONNECTION_UNIX_SOCKET ? 0 : port;
    e->weight = weight;
    e->type = type;
    e->instance.port = e->port;
    e->instance.root = h.root;
    std::memcpy(e->instance.hostname, host.data(), host.size());
    e->instance.hostname[host.size()] = '\0';
    e->instance.entry = e.get();
    h.servers.push_back(std::move(e));
    h.reset_rings();
    h.root->number_of_hosts = static_cast<std::uint32_t>(h.servers.size());
    // libmemcached weighs servers only when one of them was given a weight (see WeightRule).
    if (weight > 1 &&
        (rule == WeightRule::always || h.root->distribution == MEMCACHED_DISTRIBUTION_CONSISTENT ||
         h.root->distribution == MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA ||
         h.root->distribution == MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY ||
         h.root->distribution == MEMCACHED_DISTRIBUTION_CONSISTENT_WEIGHTED))
        h.root->ketama.weighted_ = true;
    return set_success(h);
}

}  // namespace folsom::compat

namespace {

memcached_return_t add(memcached_st* ptr, const char* hostname, in_port_t port, uint32_t weight,
                       memcached_connection_t type) {
    Handle* h = handle_of(ptr);
    if (!h) return MEMCACHED_INVALID_ARGUMENTS;
    std::string_view host = hostname ? std::string_view(hostname) : std::string_view("localhost");
    if (host.empty()) host = "localhost";
    if (type == MEMCACHED_CONNECTION_TCP && host.front() == '/')
        type = MEMCACHED_CONNECTION_UNIX_SOCKET;
    if (type != MEMCACHED_CONNECTION_UNIX_SOCKET && port == 0) port = MEMCACHED_DEFAULT_PORT;
    return folsom::compat::add_server(*h, host, port, weight, type,
                                      folsom::compat::WeightRule::when_consistent);
}

// A memcached_server_st list is a libc-allocated array; its first element counts them all.
memcached_server_st* list_append(memcached_server_st* list, const char* hostname, in_port_t port,
                                 uint32_t weight, memcached_connection_t type,
                                 memcached_return_t* error) {
    memcached_return_t unused;
    if (!error) error = &unused;
    if (!hostname || !*hostname) hostname = "localhost";
    if (hostname[0] == '/') {
        type = MEMCACHED_CONNECTION_UNIX_SOCKET;
        port = 0;
    } else if (port == 0) {
        port = MEMCACHED_DEFAULT_PORT;
    }
    if (std::strlen(hostname) >= MEMCACHED_NI_MAXHOST) {
        *error = MEMCACHED_INVALID_ARGUMENTS;
        return nullptr;
    }
    const std::uint32_t count = list ? list->number_of_hosts : 0;
    auto* grown = static_cast<memcached_server_st*>(
        std::realloc(list, sizeof(memcached_server_st) * (count + 1)));
    if (!grown) {
        *error = MEMCACHED_MEMORY_ALLOCATION_FAILURE;
        return nullptr;
    }
    memcached_server_st& s = grown[count];
    std::memset(static_cast<void*>(&s), 0, sizeof(s));
    s.options.is_initialized = true;
    s.port = port;
    s.weight = weight;
    s.type = type;
    s.major_version = s.minor_version = s.micro_version = UINT8_MAX;
    std::strcpy(s.hostname, hostname);
    grown[0].number_of_hosts = count + 1;
    grown[0].options.is_allocated = true;
    *error = MEMCACHED_SUCCESS;
    return grown;
}

}  // namespace

memcached_return_t memcached_server_add(memcached_st* ptr, const char* hostname, in_port_t port) {
    return add(ptr, hostname, port, 0, MEMCACHED_CONNECTION_TCP);
}
memcached_return_t memcached_server_add_with_weight(memcached_st* ptr, const char* hostname,
                                                    in_port_t port, uint32_t weight) {
    return add(ptr, hostname, port, weight, MEMCACHED_CONNECTION_TCP);
}
// libmemcached 1.1.4 deprecates these: they add nothing and answer MEMCACHED_DEPRECATED (a UDP
// server is a TCP one added while MEMCACHED_BEHAVIOR_USE_UDP is on).
memcached_return_t memcached_server_add_udp_with_weight(memcached_st* ptr, const char*, in_port_t,
                                                        uint32_t) {
    Handle* h = handle_of(ptr);
    if (!h) return MEMCACHED_INVALID_ARGUMENTS;
    return folsom::compat::set_error(*h, MEMCACHED_DEPRECATED,
                                     "memcached_server_add_udp is deprecated");
}
memcached_return_t memcached_server_add_udp(memcached_st* ptr, const char* hostname,
                                            in_port_t port) {
    return memcached_server_add_udp_with_weight(ptr, hostname, port, 0);
}
memcached_return_t memcached_server_add_unix_socket(memcached_st* ptr, const char* filename) {
    if (!filename || !*filename) return MEMCACHED_INVALID_ARGUMENTS;
    return add(ptr, filename, 0, 0, MEMCACHED_CONNECTION_UNIX_SOCKET);
}
memcached_return_t memcached_server_add_unix_socket_with_weight(memcached_st* ptr,
                                                                const char* filename,
                                                                uint32_t weight) {
    if (!filename || !*filename) return MEMCACHED_INVALID_ARGUMENTS;
    return add(ptr, filename, 0, weight, MEMCACHED_CONNECTION_UNIX_SOCKET);
}

memcached_return_t memcached_server_push(memcached_st* ptr, const memcached_server_list_st list) {
    Handle* h = handle_of(ptr);
    if (!h) return MEMCACHED_INVALID_ARGUMENTS;
    if (!list) return MEMCACHED_SUCCESS;
    const std::uint32_t n = list->number_of_hosts;
    for (std::uint32_t i = 0; i < n; ++i) {
        const memcached_server_st& s = list[i];
        const memcached_return_t rc = folsom::compat::add_server(
            *h, s.hostname, s.port, s.weight, s.type, folsom::compat::WeightRule::always);
        if (rc != MEMCACHED_SUCCESS) return rc;
    }
    return MEMCACHED_SUCCESS;
}

memcached_return_t memcached_push(memcached_st* destination, const memcached_st* source) {
    Handle* to = handle_of(destination);
    const Handle* from = handle_of(source);
    if (!to || !from) return MEMCACHED_INVALID_ARGUMENTS;
    for (const auto& s : from->servers) {
        const memcached_return_t rc = folsom::compat::add_server(
            *to, s->host, s->port, s->weight, s->type, folsom::compat::WeightRule::always);
        if (rc != MEMCACHED_SUCCESS) return rc;
    }
    return MEMCACHED_SUCCESS;
}

void memcached_servers_reset(memcached_st* ptr) {
    Handle* h = handle_of(ptr);
    if (!h) return;
    h->disconnect();
    h->servers.clear();
    h->reset_rings();
    h->last_disconnected = nullptr;
    ptr->number_of_hosts = 0;
    ptr->ketama.weighted_ = false;
}

uint32_t memcached_server_count(const memcached_st* ptr) {
    const Handle* h = handle_of(ptr);
    return h ? static_cast<uint32_t>(h->servers.size()) : 0;
}

memcached_server_list_st memcached_server_list_append(memcached_server_list_st ptr,
                                                      const char* hostname, in_port_t port,
                                                      memcached_return_t* error) {
    return list_append(ptr, hostname, port, 0, MEMCACHED_CONNECTION_TCP, error);
}
memcached_server_list_st memcached_server_list_append_with_weight(memcached_server_list_st ptr,
                                                                  const char* hostname,
                                                                  in_port_t port, uint32_t weight,
                                                                  memcached_return_t* error) {
    return list_append(ptr, hostname, port, weight, MEMCACHED_CONNECTION_TCP, error);
}
uint32_t memcached_server_list_count(const memcached_server_list_st ptr) {
    return ptr ? ptr->number_of_hosts : 0;
}
void memcached_server_list_free(memcached_server_list_st ptr) {
    std::free(ptr);
}
void memcached_server_free(memcached_server_st* ptr) {
    // A list (what memcached_servers_parse and _list_append return) is freed whole.
    if (ptr && ptr->options.is_allocated) std::free(ptr);
}
void memcached_server_error_reset(memcached_server_st*) {}

memcached_server_list_st memcached_servers_parse(const char* server_strings) {
    if (!server_strings) return nullptr;
    memcached_server_st* list = nullptr;
    std::string_view rest(server_strings);
    while (!rest.empty()) {
        const std::size_t end = rest.find_first_of(", ");
        std::string_view item = rest.substr(0, end);
        rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
        if (item.empty()) continue;
        std::string host;
        in_port_t port = 0;
        std::uint32_t weight = 0;
        if (item.front() == '[') {  // [v6]:port[:weight]
            const std::size_t close = item.find(']');
            if (close == std::string_view::npos) continue;
            host.assign(item.substr(1, close - 1));
            item.remove_prefix(close + 1);
        } else {
            const std::size_t colon = item.find(':');
            host.assign(item.substr(0, colon));
            item = colon == std::string_view::npos ? std::string_view{} : item.substr(colon);
        }
        if (!item.empty() && item.front() == ':') {
            item.remove_prefix(1);
            port = static_cast<in_port_t>(std::strtoul(std::string(item).c_str(), nullptr, 10));
            const std::size_t colon = item.find(':');
            if (colon != std::string_view::npos)
                weight = static_cast<std::uint32_t>(
                    std::strtoul(std::string(item.substr(colon + 1)).c_str(), nullptr, 10));
        }
        memcached_return_t rc;
        memcached_server_st* grown =
            list_append(list, host.c_str(), port, weight, MEMCACHED_CONNECTION_TCP, &rc);
        if (!grown) {
            std::free(list);
            return nullptr;
        }
        list = grown;
    }
    return list;
}

const memcached_instance_st* memcached_server_instance_by_position(const memcached_st* ptr,
                                                                   uint32_t server_key) {
    const Handle* h = handle_of(ptr);
    if (!h || server_key >= h->servers.size()) return nullptr;
    return &h->servers[server_key]->instance;
}

const memcached_instance_st* memcached_server_by_key(memcached_st* ptr, const char* key,
                                                     size_t key_length, memcached_return_t* error) {
    memcached_return_t unused;
    if (!error) error = &unused;
    Handle* h = handle_of(ptr);
    if (!h) {
        *error = MEMCACHED_INVALID_ARGUMENTS;
        return nullptr;
    }
    if (h->servers.empty()) {
        *error = folsom::compat::set_error(*h, MEMCACHED_NO_SERVERS, "no servers defined");
        return nullptr;
    }
    const std::string_view k(key ? key : "", key ? key_length : 0);
    if ((*error = folsom::compat::check_key(*h, k)) != MEMCACHED_SUCCESS) return nullptr;
    *error = MEMCACHED_SUCCESS;
    return &h->servers[h->server_for(k)]->instance;
}

memcached_return_t memcached_server_cursor(const memcached_st* ptr,
                                           const memcached_server_fn* callback, void* context,
                                           uint32_t number_of_callbacks) {
    const Handle* h = handle_of(ptr);
    if (!h) return MEMCACHED_INVALID_ARGUMENTS;
    // Every callback runs for every server, whatever the others answered; any failure makes
    // the cursor's answer SOME ERRORS (libmemcached-tools turn it into their exit code).
    bool failed = false;
    for (const auto& s : h->servers) {
        for (uint32_t i = 0; i < number_of_callbacks; ++i) {
            if (!callback[i]) continue;
            if (memcached_failed(callback[i](ptr, &s->instance, context))) failed = true;
        }
    }
    return failed ? MEMCACHED_SOME_ERRORS : MEMCACHED_SUCCESS;
}

const char* memcached_server_name(const memcached_instance_st* self) {
    return self ? self->hostname : nullptr;
}
in_port_t memcached_server_port(const memcached_instance_st* self) {
    return self ? self->port : 0;
}
in_port_t memcached_server_srcport(const memcached_instance_st*) {
    // folsom's connections do not expose their local port through the Client.
    return 0;
}
const char* memcached_server_type(const memcached_instance_st* ptr) {
    if (!ptr) return "UNKNOWN";
    switch (ptr->entry->type) {
        case MEMCACHED_CONNECTION_TCP:
            return "TCP";
        case MEMCACHED_CONNECTION_UDP:
            return "UDP";
        case MEMCACHED_CONNECTION_UNIX_SOCKET:
            return "SOCKET";
    }
    return "UNKNOWN";
}
uint8_t memcached_server_major_version(const memcached_instance_st* ptr) {
    return ptr ? ptr->entry->major : UINT8_MAX;
}
uint8_t memcached_server_minor_version(const memcached_instance_st* ptr) {
    return ptr ? ptr->entry->minor : UINT8_MAX;
}
uint8_t memcached_server_micro_version(const memcached_instance_st* ptr) {
    return ptr ? ptr->entry->micro : UINT8_MAX;
}
const char* memcached_server_error(const memcached_instance_st* ptr) {
    if (!ptr || ptr->entry->last_message.empty()) return nullptr;
    return ptr->entry->last_message.c_str();
}
memcached_return_t memcached_server_error_return(const memcached_instance_st* ptr) {
    return ptr ? ptr->entry->last_rc : MEMCACHED_INVALID_ARGUMENTS;
}
uint32_t memcached_server_response_count(const memcached_instance_st*) {
    // Every call waits for its replies before it returns: none is ever left outstanding.
    return 0;
}
void memcached_instance_next_retry(const memcached_instance_st* self, const time_t absolute_time) {
    if (self) self->entry->next_retry = absolute_time;
}
const memcached_instance_st* memcached_server_get_last_disconnect(const memcached_st* ptr) {
    const Handle* h = handle_of(ptr);
    return h ? h->last_disconnected : nullptr;
}
void memcached_reset_last_disconnected_server(memcached_st* ptr) {
    if (Handle* h = handle_of(ptr)) h->last_disconnected = nullptr;
}
void memcached_autoeject(memcached_st*) {}
