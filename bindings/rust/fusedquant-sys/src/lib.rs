//! Raw FFI bindings of libfusedquant, generated at build time by bindgen from
//! `include/fusedquant/fusedquant.h` (the documentation of every item is there). Enum values are plain
//! integer constants and cross the ABI as `int32_t`; the `fusedquant` crate is the safe API over this.
// The header's comments (C brackets included) become doc comments as they are.
#![allow(non_upper_case_globals, non_camel_case_types, non_snake_case, rustdoc::broken_intra_doc_links)]

include!(concat!(env!("OUT_DIR"), "/bindings.rs"));
include!(concat!(env!("OUT_DIR"), "/enum_constants.rs"));
