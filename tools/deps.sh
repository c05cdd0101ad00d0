# tools/deps.sh — sourced by run.sh and test.sh: installs the Debian packages Lumen needs that are
# missing (only those), as root or through sudo, then configures and builds into a directory.

# Each package and why:
#   cmake gcc g++ make pkg-config   the build (g++ is only for CMake's CUDA detection)
#   liblua5.4-dev                   the embedded Lua 5.4
#   libsdl2-dev libsdl2-ttf-dev     the visualizer window and its text
#   libepoxy-dev                    OpenGL function loading
#   libpng-dev zlib1g-dev           PNG snapshots; gzip'ed data sets
#   libjpeg-dev                     JPEG images (lm.load_image / lm.save_image, src/io/image.c; with
#                                   libpng-dev its PNGs): without it a build reads and writes PNGs only
#   libedit-dev                     line editing in the REPL (BSD licence; see README)
#   libcmocka-dev                   the C tests
#   libopenblas-dev libopenblas0-openmp   BLAS, the OpenMP build (one thread pool with Lumen's)
#   fonts-dejavu-core               the visualizer's font
#   fonts-wqy-microhei              its Chinese (the scenes' labels with :lang zh / LUMEN_LANG=zh):
#                                   Simplified Chinese in one 5 MB file (fonts-noto-cjk installs 91 MB);
#                                   without it the labels stay English
#   dataset-fashion-mnist           the real data set of the training lessons
#   fortunes fortunes-zh            the text corpora of data.Corpus (English fortunes; the 300 Tang
#                                   poems and the Chinese fortunes), /usr/share/games/fortunes
#   libgl1-mesa-dri libegl1         OpenGL without a display (llvmpipe) for headless runs and tests
#   python3-numpy                   the file interop test (tests/lua/test_files.lua: numpy reads what
#                                   Lumen writes and writes what Lumen reads, via tests/io/interop.py)
#   python3-pip                     installs the gguf package (pip, below: not a Debian package)
#   python3-pil                     the image test's reference JPEG decoder (tests/lua/test_image.lua)
#   python3-skimage                 the images of the style-transfer example and lesson (its data
#                                   folder: chelsea, astronaut, coffee; brick, grass, gravel)
#   python3-ipykernel python3-jupyter-client python3-nbclient jupyter-nbconvert
#                                   the Jupyter kernel (lua/lumen/jupyter_kernel.py is a wrapper
#                                   kernel on ipykernel) and its tests with a real client
#                                   (tests/jupyter: jupyter_client, nbconvert --execute)
#   openmpi-bin libopenmpi-dev      lumen.dist (liblumen_dist.so links Open MPI; mpirun starts the
#                                   ranks) and its test, tests/dist/run.sh
#   xvfb xauth x11-utils            a real X11 window in the visualizer's test (tests/viz/x11.sh:
#                                   xvfb-run, and xwininfo to read the window's title)
#   opencl-headers                  the OpenCL device's build (CL/cl.h; liblumen never links OpenCL:
#                                   it loads the ICD loader on first use)
#   ocl-icd-libopencl1 pocl-opencl-icd   the ICD loader and PoCL, an OpenCL that runs on the CPU:
#                                   x:to('opencl'), backend = 'opencl', kernels.opencl and their
#                                   tests (without an ICD they say so and skip)
#   clinfo                          lists the OpenCL platforms (the README's check; not needed to run)
LUMEN_DEBIAN_PACKAGES=(
	cmake gcc g++ make pkg-config
	liblua5.4-dev
	libsdl2-dev libsdl2-ttf-dev libepoxy-dev libpng-dev libjpeg-dev zlib1g-dev
	libedit-dev libcmocka-dev
	libopenblas-dev libopenblas0-openmp
	fonts-dejavu-core fonts-wqy-microhei dataset-fashion-mnist fortunes fortunes-zh
	libgl1-mesa-dri libegl1
	python3-numpy python3-pip python3-pil python3-skimage
	python3-ipykernel python3-jupyter-client python3-nbclient jupyter-nbconvert
	openmpi-bin libopenmpi-dev
	xvfb xauth x11-utils
	opencl-headers ocl-icd-libopencl1 pocl-opencl-icd clinfo
)

lumen_install_deps() {
	local missing=() p
	for p in "${LUMEN_DEBIAN_PACKAGES[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	if ((${#missing[@]})); then
		echo "lumen: installing missing Debian packages: ${missing[*]}"
		local sudo=()
		if [[ $(id -u) -ne 0 ]]; then
			command -v sudo >/dev/null || { echo "lumen: need root or sudo to install ${missing[*]}" >&2; return 1; }
			sudo=(sudo)
		fi
		"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
		"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
	fi
	lumen_install_gguf
}

# The gguf Python package (ggml's GGUF reader, writer and reference quantizers; not a Debian
# package) for the GGUF interop test (tests/io/gguf_check.py), into the user's site-packages of
# /usr/bin/python3. Offline, or without pip, the test says it is skipped: a note, never a failure.
lumen_install_gguf() {
	/usr/bin/python3 -c 'import gguf' 2>/dev/null && return 0
	if ! /usr/bin/python3 -m pip --version >/dev/null 2>&1; then
		echo "lumen: note: no pip for /usr/bin/python3 (apt-get install python3-pip): the GGUF interop test will be skipped"
		return 0
	fi
	echo "lumen: installing the gguf Python package (pip, --user)"
	/usr/bin/python3 -m pip install -q --user --break-system-packages --disable-pip-version-check --retries 1 --timeout 20 gguf ||
		echo "lumen: note: pip could not install gguf (offline?): the GGUF interop test will be skipped"
	return 0
}

# lumen_build DIR [cmake options...]: configure (once) and build with all cores. With
# LUMEN_QUIET_BUILD=1 the compiler's output goes to DIR/build.log and is shown only on failure.
lumen_build() {
	local dir=$1
	shift
	cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE="${LUMEN_BUILD_TYPE:-Release}" "$@" >/dev/null
	if [[ ${LUMEN_QUIET_BUILD:-0} == 1 ]]; then
		echo "lumen: building in $dir/ (log: $dir/build.log)" >&2
		cmake --build "$dir" -j"$(nproc)" >"$dir/build.log" 2>&1 || { cat "$dir/build.log" >&2; return 1; }
	else
		cmake --build "$dir" -j"$(nproc)"
	fi
}
