//! Puts the directory fusedquant-sys linked libfusedquant from into the rpath of this crate's tests and
//! examples, so `cargo test` and `cargo run --example` find the library without LD_LIBRARY_PATH.
fn main() {
    if let Ok(dir) = std::env::var("DEP_FUSEDQUANT_LIB_DIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
