# Writes OUTPUT, a C++ file defining izwi::server::playground_html() (server/playground.h) as the
# bytes of INPUT, so izwi-server serves its playground page without reading any file at run time.
# Run by server/CMakeLists.txt: cmake -DINPUT=... -DOUTPUT=... -P embed_playground.cmake
file(READ "${INPUT}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n"
                     bytes "${bytes}")
file(WRITE "${OUTPUT}.tmp"
     "// Generated from ${INPUT} by cmake/embed_playground.cmake; do not edit.\n"
     "#include \"server/playground.h\"\n\n"
     "namespace izwi::server {\n\n"
     "namespace {\n\n"
     "const unsigned char kHtml[] = {\n${bytes}};\n\n"
     "}  // namespace\n\n"
     "std::string_view playground_html() { return {reinterpret_cast<const char*>(kHtml), sizeof kHtml}; }\n\n"
     "}  // namespace izwi::server\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
