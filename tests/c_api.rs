//! The C ABI from C and C++: the API test (also under AddressSanitizer),
//! a dlopen client, eight threads and a cancel, the header included twice
//! in C++, the tiny build, and the installed package used through CMake
//! (shared and static targets) and pkg-config.
//!
//! The compilers come from the `cc` crate. The CMake and pkg-config tests
//! are compiled `ignore`d, with the reason, where the build script found
//! no such tool (they then read `ignored`, never `ok`); with
//! MINIMALLOC_REQUIRE_TOOLS=1 (set by .ci/run) they always run, and a
//! missing tool, or tiny build in the build tree, is a failure.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Where cargo put the library this test runs against:
/// target/<profile>/deps, next to the test executable.
fn deps_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent().expect("deps directory").to_path_buf()
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = deps_dir().join("..").join("c-tests").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

fn required() -> bool {
    std::env::var_os("MINIMALLOC_REQUIRE_TOOLS").is_some_and(|v| v == "1")
}

/// A directory with libminimalloc.so, its SONAME link and the static
/// library, as the linker and loader expect them.
fn lib_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = scratch("lib");
        let so = deps_dir().join("libminimalloc.so");
        assert!(so.exists(), "{} is missing", so.display());
        let abi = env!("MINIMALLOC_ABI_VERSION");
        for name in [
            "libminimalloc.so".to_string(),
            format!("libminimalloc.so.{abi}"),
        ] {
            std::os::unix::fs::symlink(&so, dir.join(name)).expect("symlink");
        }
        dir
    })
}

fn compiler(cpp: bool) -> cc::Tool {
    let target = env!("MINIMALLOC_TARGET");
    cc::Build::new()
        .cpp(cpp)
        .target(target)
        .host(target)
        .opt_level(1)
        .debug(true)
        .cargo_metadata(false)
        .get_compiler()
}

/// Compiles and links `sources` into `out` with `flags`, failing the test
/// with the compiler's output if it does not build.
fn build(cpp: bool, sources: &[PathBuf], flags: &[&str], out: &Path) {
    let mut cmd = compiler(cpp).to_command();
    // Sources before libraries, which the linker resolves in order.
    cmd.args(sources).args(flags).arg("-o").arg(out);
    run(&mut cmd, "compile");
}

fn run(cmd: &mut Command, what: &str) -> String {
    // cargo test puts target/<profile> on LD_LIBRARY_PATH, which would win
    // over a test program's rpath: a program runs with the library it was
    // linked for, unless the test sets the path itself.
    if !cmd.get_envs().any(|(k, _)| k == "LD_LIBRARY_PATH") {
        cmd.env_remove("LD_LIBRARY_PATH");
    }
    let output = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot run {cmd:?}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{what} failed: {cmd:?}\n{text}");
    text
}

const C_FLAGS: &[&str] = &[
    "-std=c99",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-pedantic",
    "-UNDEBUG",
];

fn include_flags() -> Vec<String> {
    vec![
        format!("-I{}", root().join("include").display()),
        format!("-I{}", root().join("c_tests").display()),
    ]
}

fn link_flags(dir: &Path) -> Vec<String> {
    vec![
        format!("-L{}", dir.display()),
        "-lminimalloc".into(),
        format!("-Wl,-rpath,{}", dir.display()),
    ]
}

/// The long search the API and thread tests time out and cancel.
fn long_search() -> [String; 2] {
    let csv = root().join("benchmarks/challenging/J.1048576.csv");
    [csv.display().to_string(), "989184".into()]
}

/// Builds and runs c_tests/api_test.c; `build_kind` is "full" or "tiny" (the
/// tiny build must refuse minimising and the heuristics as unsupported).
fn api_test(dir: &Path, extra: &[&str], lib: &Path, build_kind: &str) {
    let exe = dir.join("api_test");
    let mut flags: Vec<String> = C_FLAGS.iter().map(|s| s.to_string()).collect();
    flags.extend(extra.iter().map(|s| s.to_string()));
    flags.extend(include_flags());
    flags.extend(link_flags(lib));
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    build(false, &[root().join("c_tests/api_test.c")], &flags, &exe);
    let out = run(
        Command::new(&exe).args(long_search()).arg(build_kind),
        "api_test",
    );
    assert!(out.contains("api_test: ok"), "{out}");
}

#[test]
fn c_api_test() {
    api_test(&scratch("api"), &[], lib_dir(), "full");
}

/// Builds and runs c_tests/model_test.c (colocations, separations, the
/// conflict readback, a progress callback) against the library in `lib`.
fn model_test(dir: &Path, lib: &Path, build_kind: &str) {
    let exe = dir.join("model_test");
    let mut flags: Vec<String> = C_FLAGS.iter().map(|s| s.to_string()).collect();
    flags.extend(include_flags());
    flags.extend(link_flags(lib));
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    build(false, &[root().join("c_tests/model_test.c")], &flags, &exe);
    // A minimisation that runs past the callback's 0.3 s (D, which it
    // used, is now proven optimal in milliseconds through its coarse
    // problem).
    let csv = root().join("benchmarks/challenging/J.1048576.csv");
    let out = run(Command::new(&exe).arg(csv).arg(build_kind), "model_test");
    assert!(out.contains("model_test: ok"), "{out}");
    eprint!("{out}");
}

/// c_tests/extremes_test.c: int64 extremes (sizes, alignments, bases,
/// capacities) through the header: refused with a message, or placed
/// validly; never an overflowed offset.
#[test]
fn int64_extremes_through_the_header() {
    let dir = scratch("extremes");
    let exe = dir.join("extremes_test");
    let mut flags: Vec<String> = C_FLAGS.iter().map(|s| s.to_string()).collect();
    flags.extend(include_flags());
    flags.extend(link_flags(lib_dir()));
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    build(
        false,
        &[root().join("c_tests/extremes_test.c")],
        &flags,
        &exe,
    );
    let out = run(&mut Command::new(&exe), "extremes_test");
    assert!(out.contains("extremes_test: ok"), "{out}");
}

#[test]
fn compiler_model_through_the_header() {
    model_test(&scratch("model"), lib_dir(), "full");
}

#[test]
fn c_api_test_under_address_sanitizer() {
    // ASan also runs LeakSanitizer at exit: a leak fails the test.
    api_test(
        &scratch("asan"),
        &["-fsanitize=address", "-fno-omit-frame-pointer"],
        lib_dir(),
        "full",
    );
}

/// Random programs of C-ABI calls (c_tests/abi_ops.c: every entry point,
/// NULL handles and arrays, indices past the end, int64 extremes, unknown
/// enum codes) under AddressSanitizer (with LeakSanitizer at exit) and
/// UndefinedBehaviorSanitizer: no crash, no leak, no undefined behaviour,
/// and the facts the driver checks hold. `MINIMALLOC_ABI_PROGRAMS` sets how
/// many (CI runs more).
#[test]
fn random_abi_calls_under_address_and_undefined_sanitizers() {
    let dir = scratch("abi_random");
    let exe = dir.join("abi_random");
    let mut flags: Vec<String> = C_FLAGS.iter().map(|s| s.to_string()).collect();
    flags.extend(
        [
            "-fsanitize=address,undefined",
            "-fno-sanitize-recover=all",
            "-fno-omit-frame-pointer",
        ]
        .map(String::from),
    );
    flags.extend(include_flags());
    flags.extend(link_flags(lib_dir()));
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let sources = [
        root().join("c_tests/abi_random.c"),
        root().join("c_tests/abi_ops.c"),
    ];
    build(false, &sources, &flags, &exe);
    let programs = std::env::var("MINIMALLOC_ABI_PROGRAMS").unwrap_or_else(|_| "3000".into());
    let out = run(Command::new(&exe).arg(&programs).arg("7"), "abi_random");
    assert!(
        out.contains(&format!("{programs} random programs")),
        "{out}"
    );
    println!("{}", out.trim());
}

/// Every function the header declares is called by the random programs
/// (which the fuzz target runs too) and by the API tests, so that no
/// entry point goes untested when one is added.
#[test]
fn every_entry_point_is_driven_and_tested() {
    let header = std::fs::read_to_string(root().join("include/minimalloc.h")).unwrap();
    // Names followed by "(" somewhere in the header: the functions.
    let mut declared: Vec<&str> = header
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|name| name.starts_with("minimalloc_"))
        .filter(|name| header.contains(&format!("{name}(")))
        .collect();
    declared.sort_unstable();
    declared.dedup();
    assert!(declared.len() > 40, "{declared:?}");
    let read = |f: &str| std::fs::read_to_string(root().join("c_tests").join(f)).unwrap();
    let ops = read("abi_ops.c");
    let tests = [
        "api_test.c",
        "model_test.c",
        "threads_test.c",
        "extremes_test.c",
    ]
    .map(read)
    .concat();
    for name in declared {
        let call = format!("{name}(");
        assert!(ops.contains(&call), "c_tests/abi_ops.c never calls {name}");
        assert!(tests.contains(&call), "no C test calls {name}");
    }
}

#[test]
fn eight_threads_shared_options_and_a_cancel() {
    let dir = scratch("threads");
    let exe = dir.join("threads_test");
    let mut flags: Vec<String> = C_FLAGS.iter().map(|s| s.to_string()).collect();
    flags.push("-pthread".into());
    flags.extend(include_flags());
    flags.extend(link_flags(lib_dir()));
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    build(
        false,
        &[root().join("c_tests/threads_test.c")],
        &flags,
        &exe,
    );
    let out = run(Command::new(&exe).args(long_search()), "threads_test");
    assert!(out.contains("threads_test: ok"), "{out}");
}

fn dlopen_test(dir: &Path, so: &Path) {
    let exe = dir.join("dlopen_test");
    let mut flags: Vec<String> = C_FLAGS.iter().map(|s| s.to_string()).collect();
    flags.extend(include_flags());
    flags.push("-ldl".into());
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    build(false, &[root().join("c_tests/dlopen_test.c")], &flags, &exe);
    let out = run(Command::new(&exe).arg(so), "dlopen_test");
    assert!(out.contains("dlopen_test: ok"), "{out}");
}

#[test]
fn dlopen_and_dlsym() {
    dlopen_test(&scratch("dlopen"), &deps_dir().join("libminimalloc.so"));
}

#[test]
fn header_twice_in_cpp() {
    let dir = scratch("cpp");
    let exe = dir.join("double_include");
    let mut flags: Vec<String> = ["-std=c++11", "-Wall", "-Wextra", "-Werror", "-pedantic"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    flags.extend(include_flags());
    flags.extend(link_flags(lib_dir()));
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    build(
        true,
        &[root().join("c_tests/double_include.cpp")],
        &flags,
        &exe,
    );
    let out = run(&mut Command::new(&exe), "double_include");
    assert!(out.contains("double_include: ok"), "{out}");
}

/// Exported symbols of a shared library that are defined in it.
fn exports(so: &Path) -> Vec<String> {
    let out = run(
        Command::new("nm").args(["-D", "--defined-only"]).arg(so),
        "nm",
    );
    let mut names: Vec<String> = out
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .filter(|n| n.starts_with("minimalloc_"))
        .map(String::from)
        .collect();
    names.sort();
    names
}

/// The on-device build, made by `cargo tiny` (the alias in
/// .cargo/config.toml) before the tests (or here, when it was not): same
/// API, same behaviour, and small.
#[test]
fn tiny_build_has_the_same_api() {
    let tiny = root().join("target/tiny/libminimalloc.so");
    let tiny = std::env::var_os("CARGO_TARGET_DIR")
        .map(|d| PathBuf::from(d).join("tiny/libminimalloc.so"))
        .filter(|p| p.exists())
        .unwrap_or(tiny);
    // Not built beforehand (CI builds it first): built here, in a target
    // directory of its own, so that this cargo's lock is not in the way.
    let tiny = if tiny.exists() {
        tiny
    } else {
        let target = root().join("target/tiny-test");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        run(
            Command::new(cargo)
                .current_dir(root())
                .args([
                    "rustc",
                    "--profile",
                    "tiny",
                    "--no-default-features",
                    "--lib",
                ])
                .args(["--crate-type", "cdylib,staticlib"])
                .arg("--target-dir")
                .arg(&target),
            "the tiny build",
        );
        target.join("tiny/libminimalloc.so")
    };
    let full = deps_dir().join("libminimalloc.so");
    assert_eq!(exports(&tiny), exports(&full));
    let size = std::fs::metadata(&tiny).unwrap().len();
    eprintln!("tiny libminimalloc.so: {size} bytes");
    // What an on-device fit is promised. Built together with the rlib it
    // was a third larger (LTO could not drop what the rlib exports).
    assert!(
        size <= 64 * 1024,
        "the tiny build is {size} bytes, over 64 KiB"
    );
    dlopen_test(&scratch("tiny-dlopen"), &tiny);
    // Its static library links from plain C with nothing but the C
    // library (it once left the unwinder's personality routine undefined).
    let archive = tiny.with_file_name("libminimalloc.a");
    let exe = scratch("tiny-static").join("minimal");
    let inc = format!("-I{}", root().join("include").display());
    let flags = ["-std=c99", "-Wall", "-Werror", inc.as_str()];
    build(
        false,
        &[root().join("c_tests/minimal.c"), archive],
        &flags,
        &exe,
    );
    run(
        &mut Command::new(&exe),
        "a C program on the tiny static library",
    );
    // The whole API test, against the no_std build.
    let dir = scratch("tiny-api");
    let lib = dir.join("lib");
    std::fs::create_dir_all(&lib).unwrap();
    let abi = env!("MINIMALLOC_ABI_VERSION");
    for name in [
        "libminimalloc.so".to_string(),
        format!("libminimalloc.so.{abi}"),
    ] {
        std::os::unix::fs::symlink(&tiny, lib.join(name)).unwrap();
    }
    api_test(&dir, &[], &lib, "tiny");
    model_test(&dir, &lib, "tiny");
}

/// Configures, builds and runs the C++ consumer (c_tests/consumer) in
/// `build_dir` against the package found under `prefix`, with the shared
/// target or (`static_` "ON") the static one; returns the executable.
fn build_consumer(build_dir: &Path, prefix: &Path, static_: &str) -> PathBuf {
    run(
        Command::new("cmake")
            .arg("-S")
            .arg(root().join("c_tests/consumer"))
            .arg("-B")
            .arg(build_dir)
            .arg(format!("-DCMAKE_PREFIX_PATH={}", prefix.display()))
            .arg(format!("-DMINIMALLOC_STATIC={static_}"))
            .arg(format!(
                "-DCMAKE_CXX_COMPILER={}",
                compiler(true).path().display()
            )),
        "cmake configure",
    );
    run(
        Command::new("cmake").arg("--build").arg(build_dir),
        "cmake build",
    );
    let exe = build_dir.join("consumer");
    let out = run(&mut Command::new(&exe), "consumer");
    assert!(out.contains("consumer: height 64"), "{out}");
    exe
}

/// Installs into `dir/prefix` with the documented command (from the
/// library this test run built); returns the prefix.
fn install(dir: &Path) -> PathBuf {
    let prefix = dir.join("prefix");
    run(
        Command::new("cmake")
            .arg(format!("-DPREFIX={}", prefix.display()))
            .arg(format!("-DLIBDIR={}", deps_dir().display()))
            .arg("-P")
            .arg(root().join("cmake/install.cmake")),
        "install",
    );
    let abi = env!("MINIMALLOC_ABI_VERSION");
    for file in [
        format!("lib/libminimalloc.so.{abi}"),
        "lib/libminimalloc.so".into(),
        "lib/libminimalloc.a".into(),
        "include/minimalloc.h".into(),
        "lib/cmake/minimalloc/minimallocConfig.cmake".into(),
        "lib/cmake/minimalloc/minimallocConfigVersion.cmake".into(),
        "lib/pkgconfig/minimalloc.pc".into(),
        "lib/pkgconfig/minimalloc-static.pc".into(),
    ] {
        assert!(prefix.join(&file).exists(), "{file} not installed");
    }
    prefix
}

/// Installs into a prefix, then builds clients against it: plain C with
/// -lminimalloc, and the C++ consumer through the CMake package (shared
/// and static targets) from the prefix moved elsewhere.
#[test]
#[cfg_attr(not(has_cmake), ignore = "cmake is not installed")]
fn installed_package_with_cmake() {
    let dir = scratch("install");
    let prefix = install(&dir);
    let abi = env!("MINIMALLOC_ABI_VERSION");
    let soname = run(
        Command::new("readelf")
            .arg("-d")
            .arg(prefix.join("lib/libminimalloc.so")),
        "readelf",
    );
    assert!(
        soname.contains(&format!("[libminimalloc.so.{abi}]")),
        "{soname}"
    );

    // A plain C client: only <minimalloc.h>, -std=c99 -Wall -Werror, -lminimalloc.
    let exe = dir.join("minimal");
    let inc = format!("-I{}", prefix.join("include").display());
    let lib = link_flags(&prefix.join("lib"));
    let mut flags = vec!["-std=c99", "-Wall", "-Werror", inc.as_str()];
    flags.extend(lib.iter().map(String::as_str));
    build(false, &[root().join("c_tests/minimal.c")], &flags, &exe);
    run(&mut Command::new(&exe), "minimal client");

    // The C++ consumer, with the shared and the static target, against the
    // prefix moved elsewhere (the package is relocatable).
    let moved = dir.join("moved");
    run(
        Command::new("cp").arg("-a").arg(&prefix).arg(&moved),
        "copy prefix",
    );
    for (name, static_) in [("shared", "OFF"), ("static", "ON")] {
        let build_dir = dir.join(format!("consumer-{name}"));
        let exe = build_consumer(&build_dir, &moved, static_);
        let deps = run(Command::new("readelf").arg("-d").arg(&exe), "readelf");
        assert_eq!(
            deps.contains("libminimalloc.so"),
            static_ == "OFF",
            "{name}: {deps}"
        );
    }

    // SameMajorVersion: another major version is refused, this one found.
    let probe = dir.join("version-probe");
    std::fs::create_dir_all(&probe).unwrap();
    let major = env!("CARGO_PKG_VERSION_MAJOR").parse::<u32>().unwrap();
    std::fs::write(
        probe.join("CMakeLists.txt"),
        format!(
            "cmake_minimum_required(VERSION 3.16)\nproject(probe NONE)\n\
             find_package(minimalloc {} CONFIG QUIET)\n\
             if(minimalloc_FOUND)\n  message(FATAL_ERROR \"major {} accepted\")\nendif()\n\
             find_package(minimalloc {} CONFIG REQUIRED)\n",
            major + 1,
            major + 1,
            env!("CARGO_PKG_VERSION"),
        ),
    )
    .unwrap();
    run(
        Command::new("cmake")
            .arg("-S")
            .arg(&probe)
            .arg("-B")
            .arg(probe.join("build"))
            .arg(format!("-DCMAKE_PREFIX_PATH={}", moved.display())),
        "version probe",
    );
}

/// Installs into a prefix (with CMake's script), moves it, and builds
/// clients with pkg-config: the shared library, the static one by
/// minimalloc-static, and a fully static program by `--static`.
#[test]
#[cfg_attr(
    not(all(has_cmake, has_pkg_config)),
    ignore = "needs cmake (to install) and pkg-config"
)]
fn installed_package_with_pkg_config() {
    let dir = scratch("install-pkg-config");
    let prefix = install(&dir);
    let moved = dir.join("moved");
    run(
        Command::new("cp").arg("-a").arg(&prefix).arg(&moved),
        "copy prefix",
    );
    {
        let pc = run(
            Command::new("pkg-config")
                .args(["--cflags", "--libs", "minimalloc"])
                .env("PKG_CONFIG_PATH", moved.join("lib/pkgconfig")),
            "pkg-config",
        );
        let mut flags: Vec<String> = ["-std=c99", "-Wall", "-Werror"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        flags.extend(pc.split_whitespace().map(String::from));
        flags.push(format!("-Wl,-rpath,{}", moved.join("lib").display()));
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        let exe = dir.join("minimal-pkg-config");
        build(false, &[root().join("c_tests/minimal.c")], &flags, &exe);
        run(&mut Command::new(&exe), "pkg-config client");

        // The static library, two ways: by minimalloc-static (its archive
        // by path, the system's libraries shared), and fully static by
        // `--static` and `-static` (where only libgcc_eh, not libgcc_s,
        // exists to link).
        let pkg = |args: &[&str]| {
            run(
                Command::new("pkg-config")
                    .args(args)
                    .env("PKG_CONFIG_PATH", moved.join("lib/pkgconfig")),
                "pkg-config",
            )
        };
        for (name, pc, extra) in [
            (
                "static-pc",
                pkg(&["--cflags", "--libs", "minimalloc-static"]),
                None,
            ),
            (
                "fully-static",
                pkg(&["--static", "--cflags", "--libs", "minimalloc"]),
                Some("-static"),
            ),
        ] {
            let mut flags: Vec<&str> = vec!["-std=c99", "-Wall", "-Werror"];
            flags.extend(extra);
            flags.extend(pc.split_whitespace());
            let exe = dir.join(format!("minimal-{name}"));
            build(false, &[root().join("c_tests/minimal.c")], &flags, &exe);
            run(&mut Command::new(&exe), name);
            let deps = run(Command::new("readelf").arg("-d").arg(&exe), "readelf");
            assert!(!deps.contains("libminimalloc.so"), "{name}: {deps}");
        }
    }
}

/// The build trees with a shared library: this test's profile (built
/// here, as `cargo test` does not put the shared library there) and the
/// tiny build when it exists (it must where tools are required).
fn build_trees() -> Vec<PathBuf> {
    let profile_dir = deps_dir()
        .parent()
        .expect("profile directory")
        .to_path_buf();
    let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") => "dev".to_string(),
        Some(other) => other.to_string(),
        None => panic!("no profile directory"),
    };
    let target_dir = profile_dir
        .parent()
        .expect("target directory")
        .to_path_buf();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    run(
        Command::new(cargo)
            .current_dir(root())
            // The features this test's library was built with (the tests
            // turn `internals` on): the same build, so nothing is rebuilt
            // under the other tests' feet.
            .args(["build", "--lib", "--features", "internals"])
            .args(["--profile", &profile, "--target-dir"])
            .arg(&target_dir),
        "cargo build",
    );
    let mut dirs = vec![profile_dir];
    let tiny = target_dir.join("tiny");
    if tiny.join("libminimalloc.so").exists() {
        dirs.push(tiny);
    } else {
        assert!(
            !required(),
            "the tiny build is missing: run `cargo tiny` first"
        );
    }
    dirs
}

/// The build tree is usable as it is: after `cargo build`, a program
/// linked with `-L target/<profile> -lminimalloc` (no rpath) runs with
/// LD_LIBRARY_PATH pointing there, because the SONAME's file,
/// libminimalloc.so.2, sits beside libminimalloc.so. Checked for this
/// test's profile (built here, as `cargo test` does not put the shared
/// library there) and for the tiny build when it exists.
#[test]
fn programs_link_against_the_build_tree() {
    for dir in build_trees() {
        let abi = env!("MINIMALLOC_ABI_VERSION");
        let soname = dir.join(format!("libminimalloc.so.{abi}"));
        assert!(soname.exists(), "{} is missing", soname.display());
        let exe = scratch(&format!(
            "build-tree-{}",
            dir.file_name().unwrap().to_string_lossy()
        ))
        .join("minimal");
        let mut flags: Vec<String> = C_FLAGS.iter().map(|s| s.to_string()).collect();
        flags.extend(include_flags());
        flags.push(format!("-L{}", dir.display()));
        flags.push("-lminimalloc".into());
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        build(false, &[root().join("c_tests/minimal.c")], &flags, &exe);
        run(
            Command::new(&exe).env("LD_LIBRARY_PATH", &dir),
            "the program linked against the build tree",
        );
    }
}

/// The build tree's CMake package (lib/cmake/minimalloc, written by
/// build.rs): the C++ consumer finds it with the prefix path alone, with
/// the shared and the static target, for this test's profile and the
/// tiny build.
#[test]
#[cfg_attr(not(has_cmake), ignore = "cmake is not installed")]
fn the_build_trees_cmake_package() {
    for dir in build_trees() {
        assert!(dir
            .join("lib/cmake/minimalloc/minimallocConfig.cmake")
            .exists());
        for static_ in ["OFF", "ON"] {
            let build_dir = scratch(&format!(
                "build-tree-cmake-{}-{static_}",
                dir.file_name().unwrap().to_string_lossy()
            ));
            let _ = std::fs::remove_dir_all(&build_dir);
            build_consumer(&build_dir, &dir, static_);
        }
    }
}
