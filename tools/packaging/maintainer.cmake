# SPDX-License-Identifier: BSD-2-Clause
# maintainer.cmake - who the Debian packages name as their Maintainer: whoever builds them, found
# the way Debian's own tools (dch, dh_make) find them. Included by cpack.cmake; also run by
# tests/packaging/maintainer_test.cmake in script mode.

# rdps_package_maintainer(OUT SOURCE_OUT ERROR_OUT GIT_DIR): "Name <address>" into OUT and where
# it came from into SOURCE_OUT, from the first of
#   1. the cache variable RDPS_PACKAGE_CONTACT (-DRDPS_PACKAGE_CONTACT="Name <address>");
#   2. the environment's DEBEMAIL ("Name <address>", or an address with DEBFULLNAME for the name);
#   3. git config user.name and user.email of the checkout at GIT_DIR;
#   4. the user configure runs as, at the host's fully qualified name.
# ERROR_OUT is empty, or says why the result is not of the form "Name <local@domain.tld>".
function(rdps_package_maintainer out source_out error_out git_dir)
  set(value "")
  if(RDPS_PACKAGE_CONTACT)
    set(value "${RDPS_PACKAGE_CONTACT}")
    set(source "RDPS_PACKAGE_CONTACT")
  elseif(NOT "$ENV{DEBEMAIL}" STREQUAL "")
    set(value "$ENV{DEBEMAIL}")
    if(NOT value MATCHES "<")
      set(name "$ENV{DEBFULLNAME}")
      if(name STREQUAL "")
        set(name "$ENV{USER}")
      endif()
      set(value "${name} <${value}>")
    endif()
    set(source "DEBEMAIL")
  else()
    find_program(rdps_git git)
    if(rdps_git AND EXISTS "${git_dir}")
      execute_process(COMMAND ${rdps_git} -C ${git_dir} config user.name
                      OUTPUT_VARIABLE name OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      execute_process(COMMAND ${rdps_git} -C ${git_dir} config user.email
                      OUTPUT_VARIABLE email OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      if(NOT name STREQUAL "" AND NOT email STREQUAL "")
        set(value "${name} <${email}>")
        set(source "git config user.name, user.email")
      endif()
    endif()
    if(value STREQUAL "")
      set(user "$ENV{USER}")
      if(user STREQUAL "")
        set(user "$ENV{LOGNAME}")
      endif()
      cmake_host_system_information(RESULT host QUERY FQDN)
      set(value "${user} <${user}@${host}>")
      set(source "the user and host configure ran as")
    endif()
  endif()
  set(error "")
  if(NOT value MATCHES "^[^<>@]*[^<>@ ] <[^<>@ ]+@[^<>@ ]+\\.[^<>@ .]+>$")
    set(error "'${value}' (from ${source}) is not of the form 'Name <local@domain.tld>'")
  elseif(value MATCHES "@(.+\\.)?(example|invalid|localhost|test)(\\.[a-z]+)?>$")
    set(error "'${value}' (from ${source}) is a placeholder address, not the maintainer's")
  endif()
  set(${out} "${value}" PARENT_SCOPE)
  set(${source_out} "${source}" PARENT_SCOPE)
  set(${error_out} "${error}" PARENT_SCOPE)
endfunction()
