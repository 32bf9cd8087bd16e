//! Finds libfusedquant to link: $FUSEDQUANT_LIB_DIR, else the repository's CMake build/ directory, else the
//! system linker paths. With the `bindgen` feature it also generates the FFI from the header (bindgen, which
//! needs libclang); without it the crate uses the checked-in src/bindings.rs and src/enum_constants.rs.
use std::env;
use std::path::{Path, PathBuf};

fn main() {
    let repo = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap()).join("../../..");
    #[cfg(feature = "bindgen")]
    generate::bindings(&repo, &PathBuf::from(env::var("OUT_DIR").unwrap()));
    link(&repo.join("build"));
}

fn link(repo_build: &Path) {
    println!("cargo:rerun-if-env-changed=FUSEDQUANT_LIB_DIR");
    println!("cargo:rerun-if-changed={}", repo_build.join("libfusedquant.so").display());
    let dir = env::var_os("FUSEDQUANT_LIB_DIR")
        .map(PathBuf::from)
        .or_else(|| repo_build.join("libfusedquant.so").exists().then(|| repo_build.to_path_buf()));
    if let Some(dir) = dir {
        let dir = dir.canonicalize().unwrap_or(dir);
        println!("cargo:rustc-link-search=native={}", dir.display());
        // Dependents read this as DEP_FUSEDQUANT_LIB_DIR to put it in their tests' and examples' rpath.
        println!("cargo:lib_dir={}", dir.display());
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
    }
    println!("cargo:rustc-link-lib=dylib=fusedquant");
}

#[cfg(feature = "bindgen")]
mod generate {
    use bindgen::callbacks::{EnumVariantValue, ParseCallbacks};
    use std::fmt::Write as _;
    use std::path::{Path, PathBuf};
    use std::sync::{Arc, Mutex};
    use std::{env, fs};

    /// Records every enum constant bindgen parses, so the safe crate can test that it maps all of them.
    #[derive(Debug, Default)]
    struct EnumConstants(Arc<Mutex<Vec<(String, String, i64)>>>);

    impl ParseCallbacks for EnumConstants {
        fn enum_variant_name(&self, enum_name: Option<&str>, name: &str, value: EnumVariantValue) -> Option<String> {
            let value = match value {
                EnumVariantValue::Signed(v) => v,
                EnumVariantValue::Unsigned(v) => v as i64,
                EnumVariantValue::Boolean(b) => b as i64,
            };
            let enum_name = enum_name.unwrap_or_default().trim_start_matches("enum ").to_string();
            self.0.lock().unwrap().push((enum_name, name.to_string(), value));
            None
        }
    }

    /// Writes OUT_DIR/bindings.rs and OUT_DIR/enum_constants.rs from $FUSEDQUANT_INCLUDE_DIR/fusedquant/fusedquant.h,
    /// else the repository's include/ (a packaged crate has no repository: set the variable to the installed
    /// headers' directory).
    pub fn bindings(repo: &Path, out: &Path) {
        println!("cargo:rerun-if-env-changed=FUSEDQUANT_INCLUDE_DIR");
        let include = env::var_os("FUSEDQUANT_INCLUDE_DIR").map_or_else(|| repo.join("include"), PathBuf::from);
        let header = include.join("fusedquant/fusedquant.h");
        println!("cargo:rerun-if-changed={}", header.display());

        let constants = EnumConstants::default();
        let table = constants.0.clone();
        bindgen::Builder::default()
            .header(header.to_str().expect("header path is not UTF-8"))
            .clang_arg("-DFQ_API=") // the header allows binding generators to define FQ_API empty
            .clang_arg("-DFQ_EXPERIMENTAL_API") // the experimental section too (docs/abi.md): grouped GEMM, knobs
            .allowlist_function("fq.*")
            .allowlist_type("fq.*")
            .allowlist_var("FQ_.*")
            .size_t_is_usize(true)
            // Enums become plain integer constants (FQ_STATUS_SUCCESS, ...), never Rust enums (bindgen
            // issue 667); the safe crate maps them to its own enums with an Unknown(i32) variant.
            .default_enum_style(bindgen::EnumVariation::Consts)
            .prepend_enum_name(false)
            .parse_callbacks(Box::new(constants))
            .generate()
            .expect("bindgen could not translate fusedquant.h (is libclang installed? apt-get install libclang1-14)")
            .write_to_file(out.join("bindings.rs"))
            .expect("cannot write bindings.rs");

        let mut rows = table.lock().unwrap().clone();
        rows.sort_by(|a, b| (&a.0, a.2, &a.1).cmp(&(&b.0, b.2, &b.1)));
        rows.dedup();
        let mut src = String::from(
            "/// Every enum constant of fusedquant.h as (C enum, constant, value), as bindgen parsed them.\n",
        );
        src.push_str("pub const HEADER_ENUM_CONSTANTS: &[(&str, &str, i64)] = &[\n");
        for (e, name, v) in rows.iter().filter(|(e, ..)| e.starts_with("fq")) {
            writeln!(src, "    ({e:?}, {name:?}, {v}),").unwrap();
        }
        src.push_str("];\n");
        fs::write(out.join("enum_constants.rs"), src).expect("cannot write enum_constants.rs");
    }
}
