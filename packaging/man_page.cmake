# Writes nanscope.1 (and nanscope.1.gz, as Debian installs man pages) from the program's own help:
# `PROGRAM --help` gives the overview and its "Headless: nanscope a | b | ... (each with --help)"
# line the sub-commands, whose `--help` texts become the COMMANDS section. Run as
#   cmake -DPROGRAM=path/to/nanscope -DOUT=dir/nanscope.1 -DVERSION=0.1.0 -P man_page.cmake
foreach(var PROGRAM OUT VERSION)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "man_page.cmake: ${var} is not set")
  endif()
endforeach()

function(help_of out_var)
  execute_process(COMMAND "${PROGRAM}" ${ARGN} --help OUTPUT_VARIABLE text ERROR_VARIABLE error
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR text STREQUAL "")
    message(FATAL_ERROR "man_page.cmake: `${PROGRAM} ${ARGN} --help` failed (${rc}): ${error}")
  endif()
  string(REPLACE "${PROGRAM}" "nanscope" text "${text}")  # Qt's usage line names argv[0]
  # roff: a backslash is \e, and a line that starts with . or ' would be read as a request.
  string(REPLACE "\\" "\\e" text "${text}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
  string(REGEX REPLACE "\n+$" "" text "${text}")
  set(${out_var} "${text}" PARENT_SCOPE)
endfunction()

help_of(overview)
if(NOT overview MATCHES "Headless: nanscope ([a-z| -]+) \\(each with --help\\)")
  message(FATAL_ERROR "man_page.cmake: `${PROGRAM} --help` does not list its sub-commands")
endif()
string(REPLACE "|" ";" commands "${CMAKE_MATCH_1}")

set(commands_section "")
foreach(command IN LISTS commands)
  string(STRIP "${command}" command)
  help_of(usage ${command})
  string(APPEND commands_section ".SS ${command}\n.nf\n${usage}\n.fi\n")
endforeach()

string(TIMESTAMP date "%Y-%m-%d" UTC)  # SOURCE_DATE_EPOCH, where set, makes it reproducible
file(WRITE "${OUT}" ".TH NANSCOPE 1 \"${date}\" \"NaNScope ${VERSION}\" \"User Commands\"
.SH NAME
nanscope \\- find where, when and why NaN and Inf appear while training a neural network
.SH SYNOPSIS
.B nanscope
[\\fIOPTIONS\\fR] [\\fIFILE.pt\\fR|\\fIFILE.nsrun\\fR|\\fIFOLDER\\fR]
.br
.B nanscope
\\fICOMMAND\\fR [\\fIOPTIONS\\fR]
.SH DESCRIPTION
NaNScope trains a neural network with LibTorch (a built-in demo or a TorchScript model), or opens
a run file recorded by itself or by the Python recorder, and shows for every layer and every step
the health of forward activations, backward gradients and parameters: where a NaN or Inf was born
(phase, module, op), with the loss, gradient norm and learning rate. Without a command it opens the
window (where the program has one); the commands below run without a display.
.PP
.nf
${overview}
.fi
.SH COMMANDS
${commands_section}.SH EXIT STATUS
0 when the command completed (finding NaN is a success); 1 on a run error (a model or run file that
cannot be read, a recording that failed); 2 on bad arguments. Errors are one line on standard error.
.SH FILES
.TP
.I *.nsrun
run files: SQLite databases (application_id \"NSRN\") that \\fBnanscope report\\fR, \\fBexport\\fR,
\\fBdiff\\fR, \\fBreplay\\fR and the window read
.SH SEE ALSO
\\fBsqlite3\\fR(1); the README and docs/ of the NaNScope sources
")

file(ARCHIVE_CREATE OUTPUT "${OUT}.gz" PATHS "${OUT}" FORMAT raw COMPRESSION GZip COMPRESSION_LEVEL 9 MTIME 0)
