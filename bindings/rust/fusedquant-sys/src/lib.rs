//! Raw FFI bindings of libfusedquant, made by bindgen from `include/fusedquant/fusedquant.h` (the
//! documentation of every item is there). Enum values are plain integer constants and cross the ABI as
//! `int32_t`; the `fusedquant` crate is the safe API over this.
//!
//! By default the crate compiles the bindings checked in beside this file (`src/bindings.rs`,
//! `src/enum_constants.rs`), so building it needs no libclang. The `bindgen` feature generates them from the
//! header at build time instead; its test `checked_in_bindings_match_the_header` fails when the checked-in
//! files differ from what bindgen makes of the header, and says how to update them.
// The header's comments (C brackets included) become doc comments as they are.
#![allow(non_upper_case_globals, non_camel_case_types, non_snake_case, rustdoc::broken_intra_doc_links)]

#[cfg(feature = "bindgen")]
include!(concat!(env!("OUT_DIR"), "/bindings.rs"));
#[cfg(feature = "bindgen")]
include!(concat!(env!("OUT_DIR"), "/enum_constants.rs"));

// The checked-in bindings were generated for 64-bit Unix (int64_t is `c_long` there).
#[cfg(all(not(feature = "bindgen"), not(all(unix, target_pointer_width = "64"))))]
compile_error!("the checked-in bindings are for 64-bit Unix targets: build with the `bindgen` feature");
#[cfg(not(feature = "bindgen"))]
include!("bindings.rs");
#[cfg(not(feature = "bindgen"))]
include!("enum_constants.rs");

#[cfg(all(test, not(feature = "bindgen")))]
mod tests {
    /// The checked-in declarations link against the library and call it with the header's ABI.
    #[test]
    fn checked_in_bindings_call_the_library() {
        assert_eq!(unsafe { super::fqGetVersion() }, super::FQ_VERSION_NUMBER);
        let mut handle = std::ptr::null_mut();
        assert_eq!(
            unsafe { super::fqCreate(&mut handle, super::FQ_BACKEND_HOST as i32, 0) },
            super::FQ_STATUS_SUCCESS as i32
        );
        assert_eq!(unsafe { super::fqDestroy(handle) }, super::FQ_STATUS_SUCCESS as i32);
        assert!(super::HEADER_ENUM_CONSTANTS.contains(&("fqStatus", "FQ_STATUS_SUCCESS", 0)));
    }
}

#[cfg(all(test, feature = "bindgen"))]
mod tests {
    use std::path::Path;

    /// The text without whitespace: rustfmt's layout of bindgen's output varies with the rustfmt installed.
    fn tokens(path: &Path) -> String {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        text.split_whitespace().collect()
    }

    #[test]
    fn checked_in_bindings_match_the_header() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        for name in ["bindings.rs", "enum_constants.rs"] {
            let generated = Path::new(env!("OUT_DIR")).join(name);
            assert!(
                tokens(&generated) == tokens(&src.join(name)),
                "src/{name} is not what bindgen makes of fusedquant.h; update it: cp {} {}",
                generated.display(),
                src.join(name).display()
            );
        }
    }
}
