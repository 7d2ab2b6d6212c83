#!/usr/bin/env bash
# Install Princeton WordNet 3.0 for NLTK without the NLTK downloader (no internet needed beyond Debian's mirror).
#
#   bash scripts/install_wordnet.sh [--optional] [DATA_DIR]
#
# --optional (make run, demo, serve, worker): where WordNet cannot be installed (no apt-get, no sudo, apt-get
# fails), say what METEOR needs and exit 0; the platform then lists METEOR (and --preprocess authors) as
# unavailable, naming the fix. Without it (make wordnet, make test) that is an error.
#
# DATA_DIR is the NLTK data directory to fill. Default: the first entry of $NLTK_DATA if set, else
# <repo>/.venv/nltk_data (the virtualenv's sys.prefix/nltk_data, which metaeval.core.measures.nltkdata and NLTK itself
# search). What it does:
#   1. installs the Debian packages wordnet-base (data.*, index.*, *.exc, cntlist.rev) and wordnet-sense-index
#      (index.sense) if their files are missing (apt-get, quiet, non-interactive; sudo only when not root);
#   2. COPIES (no symlinks, so the data dir stays valid if the packages go away) the files NLTK's
#      WordNetCorpusReader opens from /usr/share/wordnet into DATA_DIR/corpora/wordnet/;
#   3. writes the `lexnames` file the reader needs, which Debian does not ship (it is the lexnames(5WN) table:
#      file number, lexicographer file name, syntactic category 1=noun 2=verb 3=adj 4=adv, tab-separated);
#   4. writes a stamp file; a later run with the stamp present and the files in place exits at once.
# The copy is built in a temporary folder and moved into place, so an interrupted run leaves no half-filled corpus.
set -euo pipefail

STAMP_VERSION="wordnet-3.0 debian-copy v1"
SRC=${WORDNET_SRC:-/usr/share/wordnet}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

OPTIONAL=0
if [ "${1:-}" = --optional ]; then OPTIONAL=1; shift; fi

if [ $# -ge 1 ] && [ -n "$1" ]; then
  DATA_DIR=$1
elif [ -n "${NLTK_DATA:-}" ]; then
  DATA_DIR=${NLTK_DATA%%:*}   # NLTK_DATA may be a ':'-separated list; install into its first entry
else
  DATA_DIR=$REPO/.venv/nltk_data
fi
DEST=$DATA_DIR/corpora/wordnet
STAMP=$DEST/.metaeval-installed

# Files NLTK 3.x's WordNetCorpusReader reads (its _FILES, less lexnames, which we generate).
FILES="cntlist.rev index.sense index.adj index.adv index.noun index.verb data.adj data.adv data.noun data.verb
adj.exc adv.exc noun.exc verb.exc"

have_all() {
  local dir=$1 f
  for f in $FILES; do [ -s "$dir/$f" ] || return 1; done
}

# 0. Fast path: already done.
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$STAMP_VERSION" ] && [ -s "$DEST/lexnames" ] && have_all "$DEST"; then
  exit 0
fi

start=$(date +%s)

# Without apt-get (or the rights to run it) WordNet cannot come from here: --optional goes on without it.
cannot_install() {
  if [ "$OPTIONAL" = 1 ]; then
    cat >&2 <<EOF
install_wordnet: $1; going on without WordNet.
  METEOR (and --preprocess authors) will be listed as unavailable. They need Princeton WordNet 3.0 as an NLTK
  corpus: on Debian or Ubuntu run \`make wordnet\` (apt-get installs wordnet-base and wordnet-sense-index, copied
  into $DATA_DIR), or set NLTK_DATA to a directory that holds corpora/wordnet.
EOF
    exit 0
  fi
  echo "install_wordnet: $1 (make wordnet needs apt-get for Debian's wordnet-base and wordnet-sense-index," \
    "or set WORDNET_SRC to a folder with the WordNet 3.0 dictionary files)" >&2
  exit 1
}

# 1. Debian packages.
if ! have_all "$SRC"; then
  command -v apt-get >/dev/null 2>&1 || cannot_install "apt-get is not on PATH, and $SRC lacks WordNet"
  if [ "$SRC" != /usr/share/wordnet ]; then
    cannot_install "WORDNET_SRC=$SRC lacks WordNet dictionary files"
  fi
  SUDO=""
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null 2>&1 || cannot_install "apt-get needs root and sudo is not on PATH"
    SUDO=sudo
  fi
  echo "install_wordnet: installing Debian packages wordnet-base wordnet-sense-index"
  LOG=$(mktemp)
  if ! { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
      --no-install-recommends wordnet-base wordnet-sense-index; } >"$LOG" 2>&1; then
    cat "$LOG" >&2; rm -f "$LOG"
    cannot_install "apt-get failed (see above)"
  fi
  rm -f "$LOG"
  have_all "$SRC" || { echo "install_wordnet: $SRC still lacks WordNet files after apt-get" >&2; exit 1; }
fi

# 2. Copy into a temporary folder next to the destination, then move into place.
mkdir -p "$DATA_DIR/corpora"
TMP=$(mktemp -d "$DATA_DIR/corpora/.wordnet.tmp.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
for f in $FILES; do
  cp --dereference "$SRC/$f" "$TMP/$f"
done
if [ -f /usr/share/doc/wordnet-base/copyright ]; then
  cp --dereference /usr/share/doc/wordnet-base/copyright "$TMP/LICENSE"
fi

# 3. lexnames: the 45 lexicographer files of WordNet 3.0 (lexnames(5WN)).
i=0
for entry in \
  adj.all:3 adj.pert:3 adv.all:4 noun.Tops:1 noun.act:1 noun.animal:1 noun.artifact:1 noun.attribute:1 \
  noun.body:1 noun.cognition:1 noun.communication:1 noun.event:1 noun.feeling:1 noun.food:1 noun.group:1 \
  noun.location:1 noun.motive:1 noun.object:1 noun.person:1 noun.phenomenon:1 noun.plant:1 noun.possession:1 \
  noun.process:1 noun.quantity:1 noun.relation:1 noun.shape:1 noun.state:1 noun.substance:1 noun.time:1 \
  verb.body:2 verb.change:2 verb.cognition:2 verb.communication:2 verb.competition:2 verb.consumption:2 \
  verb.contact:2 verb.creation:2 verb.emotion:2 verb.motion:2 verb.perception:2 verb.possession:2 \
  verb.social:2 verb.stative:2 verb.weather:2 adj.ppl:3; do
  printf '%02d\t%s\t%s\n' "$i" "${entry%:*}" "${entry##*:}"
  i=$((i + 1))
done >"$TMP/lexnames"
[ "$i" = 45 ] || { echo "install_wordnet: expected 45 lexnames, wrote $i" >&2; exit 1; }

cat >"$TMP/README" <<EOF
Princeton WordNet 3.0, copied from Debian's wordnet-base and wordnet-sense-index packages ($SRC)
by scripts/install_wordnet.sh for NLTK's WordNetCorpusReader. lexnames was generated from the
lexnames(5WN) table. See LICENSE for the WordNet licence.
EOF
echo "$STAMP_VERSION" >"$TMP/.metaeval-installed"

rm -rf "$DEST"
mv "$TMP" "$DEST"
chmod 755 "$DEST"
trap - EXIT

echo "install_wordnet: WordNet 3.0 in $DEST ($(du -sh "$DEST" | cut -f1), $(( $(date +%s) - start ))s)"
