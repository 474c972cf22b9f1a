# The folders under src/ are layers. A file may include headers of its own layer and of the
# layers below it, never of one above: data flows down on the way out and up on the way back
# through interfaces (detail::Operation, detail::ClientCore), not through includes.
#
#   rank 0  base       errors, server addresses, request memory, value compression
#   rank 1  protocol   the sans-I/O codecs (also include/folsom/protocol/)
#   rank 1  observe    metrics, the registry, Prometheus text, latency histograms
#   rank 2  wire       a protocol's driver: encode, join, decode, handshake; the command queue
#   rank 3  net        connections: transport, write path, read path, health and backoff
#   rank 4  cluster    placement (hash/), discovery (discovery/), the core decorators
#   rank 5  routing    route trees: parsing, validation, the route operations
#   rank 6  client     the facades and the one place that assembles the pieces
#
# Two layers of the same rank do not include each other. Below client/, no file includes a
# facade header (folsom/client.hpp and its siblings): they are the user's entry points. The
# libmemcached compatibility layer (compat/) stands above the facades and sees only the public
# headers.
#
#   cmake -DSOURCE_DIR=<repo> -P check_layers.cmake
cmake_minimum_required(VERSION 3.25)
set(layers base protocol observe wire net cluster routing client)
set(rank_base 0)
set(rank_protocol 1)
set(rank_observe 1)
set(rank_wire 2)
set(rank_net 3)
set(rank_cluster 4)
set(rank_routing 5)
set(rank_client 6)
set(facades client blocking_client typed_client quiet_client fake_client cache_recipes)
list(JOIN layers "|" layer_alternatives)
list(JOIN facades "|" facade_alternatives)

set(bad "")
set(checked 0)
set(edges 0)
foreach(layer ${layers})
  file(GLOB_RECURSE files ${SOURCE_DIR}/src/${layer}/*.hpp ${SOURCE_DIR}/src/${layer}/*.cpp)
  foreach(f ${files})
    math(EXPR checked "${checked} + 1")
    file(STRINGS ${f} includes REGEX "^#[ \t]*include[ \t]*\"")
    foreach(line ${includes})
      string(REGEX REPLACE "^#[ \t]*include[ \t]*\"([^\"]*)\".*" "\\1" target "${line}")
      file(RELATIVE_PATH rel ${SOURCE_DIR} ${f})
      if(target MATCHES "^(${layer_alternatives})/")
        math(EXPR edges "${edges} + 1")
        set(other ${CMAKE_MATCH_1})
        if(NOT other STREQUAL layer AND NOT rank_${other} LESS rank_${layer})
          list(APPEND bad "${rel} (${layer}) includes ${target} (${other}): upward or sideways")
        endif()
      elseif(target MATCHES "^folsom/(${facade_alternatives})\\.hpp$" AND NOT layer STREQUAL client)
        list(APPEND bad "${rel} (${layer}) includes the facade ${target}")
      endif()
    endforeach()
  endforeach()
endforeach()

file(GLOB_RECURSE compat_files ${SOURCE_DIR}/compat/*.h ${SOURCE_DIR}/compat/*.hpp
     ${SOURCE_DIR}/compat/*.c ${SOURCE_DIR}/compat/*.cpp)
foreach(f ${compat_files})
  math(EXPR checked "${checked} + 1")
  file(STRINGS ${f} includes REGEX "^#[ \t]*include[ \t]*\"(${layer_alternatives})/")
  if(includes)
    file(RELATIVE_PATH rel ${SOURCE_DIR} ${f})
    list(APPEND bad "${rel} (compat) reaches into src/: ${includes}")
  endif()
endforeach()

# Every folder under src/ must be a declared layer, so that a new one is placed on purpose.
file(GLOB entries LIST_DIRECTORIES true ${SOURCE_DIR}/src/*)
foreach(e ${entries})
  get_filename_component(name ${e} NAME)
  if(NOT IS_DIRECTORY ${e})
    list(APPEND bad "src/${name}: a file outside every layer folder")
  elseif(NOT name IN_LIST layers)
    list(APPEND bad "src/${name}/: not a declared layer (add it to tests/layering/check_layers.cmake)")
  endif()
endforeach()

if(bad)
  list(JOIN bad "\n  " text)
  message(FATAL_ERROR "layering violations:\n  ${text}")
endif()
message(STATUS "checked ${checked} files, ${edges} includes between layer folders: all run downward")
