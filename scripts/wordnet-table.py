#!/usr/bin/env python3
"""Generate crates/verify/data/wordnet.txt from WordNet 3.0 (Debian's `wordnet-base`).

    apt-get install wordnet-base
    scripts/wordnet-table.py [/usr/share/wordnet] > crates/verify/data/wordnet.txt

The table keeps single-word lemmas (lowercase letters only) and, for each lemma, only its
TOP_SENSES most frequent senses per part of speech (WordNet orders a lemma's senses by tagged
frequency), so rare senses ("run" as "a score in baseball") do not make rare synonyms.
Three sections, one group per line, words separated by spaces:

    [synonyms]  the lemmas of one synset for which it is a top sense
                (with the comparatives and superlatives of adjectives)
    [derived]   a lemma and a derivationally related lemma (both in a top sense) that do not
                share their first five letters (those already match by prefix)
    [antonyms]  a lemma and its antonym: direct antonyms, and for adjectives the satellites of
                one head against the other head

The output is deterministic (sorted). The license of WordNet 3.0 heads the file, as it requires.
"""
import os
import re
import sys

TOP_SENSES = 2
WORD = re.compile(r"^[a-z]{2,}$")
POS_FILES = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}

LICENSE = """WordNet Release 3.0. This software and database is being provided to you, the LICENSEE, by
Princeton University under the following license. By obtaining, using and/or copying this
software and database, you agree that you have read, understood, and will comply with these
terms and conditions.: Permission to use, copy, modify and distribute this software and
database and its documentation for any purpose and without fee or royalty is hereby granted,
provided that you agree to comply with the following copyright notice and statements,
including the disclaimer, and that the same appear on ALL copies of the software, database
and documentation, including modifications that you make for internal use or for
distribution. WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved. THIS
SOFTWARE AND DATABASE IS PROVIDED "AS IS" AND PRINCETON UNIVERSITY MAKES NO REPRESENTATIONS
OR WARRANTIES, EXPRESS OR IMPLIED. BY WAY OF EXAMPLE, BUT NOT LIMITATION, PRINCETON
UNIVERSITY MAKES NO REPRESENTATIONS OR WARRANTIES OF MERCHANT- ABILITY OR FITNESS FOR ANY
PARTICULAR PURPOSE OR THAT THE USE OF THE LICENSED SOFTWARE, DATABASE OR DOCUMENTATION WILL
NOT INFRINGE ANY THIRD PARTY PATENTS, COPYRIGHTS, TRADEMARKS OR OTHER RIGHTS. The name of
Princeton University or Princeton may not be used in advertising or publicity pertaining to
distribution of the software and/or database. Title to copyright in this software, database
and any associated documentation shall at all times remain with Princeton University and
LICENSEE agrees to preserve same."""


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/wordnet"
    top = set()  # (pos, offset, lemma): a top sense of the lemma
    for pos, name in POS_FILES.items():
        with open(os.path.join(root, "index." + name)) as f:
            for line in f:
                if line.startswith(" "):
                    continue
                parts = line.split()
                lemma = parts[0]
                if not WORD.match(lemma):
                    continue
                p_cnt = int(parts[3])
                offsets = parts[4 + p_cnt + 2:]
                for off in offsets[:TOP_SENSES]:
                    top.add((pos, off, lemma))
    synsets = {}  # (pos, offset) -> (lemmas, pointers, ss_type)
    for pos, name in POS_FILES.items():
        with open(os.path.join(root, "data." + name)) as f:
            for line in f:
                if line.startswith(" "):
                    continue
                parts = line.split(" | ")[0].split()
                off, ss_type = parts[0], parts[2]
                w_cnt = int(parts[3], 16)
                lemmas = [re.sub(r"\(.*\)$", "", parts[4 + 2 * k]).lower() for k in range(w_cnt)]
                i = 4 + 2 * w_cnt
                p_cnt = int(parts[i])
                ptrs = []
                for k in range(p_cnt):
                    sym, t_off, t_pos, st = parts[i + 1 + 4 * k: i + 5 + 4 * k]
                    ptrs.append((sym, t_off, "a" if t_pos == "s" else t_pos, st))
                synsets[(pos, off)] = (lemmas, ptrs, ss_type)

    def is_top(pos, off, lemma):
        return WORD.match(lemma) and (pos, off, lemma) in top

    # Comparatives and superlatives ("harder", "simplest", "easiest"): members of their base's
    # synsets, as the light stemmer cannot reach them. Irregular ones come from adj.exc and
    # adv.exc; regular ones follow WordNet's own rules (-er/-est, -e, -y to -i), unless the
    # form is a lemma of its own ("number" is not "more numb").
    lemmas_all = set()
    for name in POS_FILES.values():
        with open(os.path.join(root, "index." + name)) as f:
            lemmas_all.update(line.split()[0] for line in f if not line.startswith(" "))
    inflections = {}
    for (pos, _, lemma) in top:
        # Short adjectives only: longer ones compare with "more" and "most".
        if pos != "a" or len(lemma) < 3 or len(lemma) > (7 if lemma.endswith("y") else 6):
            continue
        if lemma.endswith("e"):
            forms = [lemma + "r", lemma + "st"]
        elif lemma.endswith("y"):
            forms = [lemma[:-1] + "ier", lemma[:-1] + "iest"]
        else:
            forms = [lemma + "er", lemma + "est"]
        for form in forms:
            if form not in lemmas_all:
                inflections.setdefault((pos, lemma), set()).add(form)
    inflections = {k: sorted(v) for k, v in inflections.items()}
    for pos, name in (("a", "adj"), ("r", "adv")):
        with open(os.path.join(root, name + ".exc")) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 2 and WORD.match(parts[0]) and WORD.match(parts[1]):
                    inflections.setdefault((pos, parts[1]), []).append(parts[0])
    inflections = {k: sorted(set(v)) for k, v in inflections.items()}

    synonyms = set()
    derived = set()
    antonyms = set()
    for (pos, off), (lemmas, ptrs, ss_type) in synsets.items():
        members = {l for l in lemmas if is_top(pos, off, l)}
        for m in list(members):
            members.update(inflections.get((pos, m), []))
        members = sorted(members)
        if len(members) >= 2:
            synonyms.add(" ".join(members))
        for sym, t_off, t_pos, st in ptrs:
            if st == "0000" or sym not in ("+", "!"):
                continue
            src = lemmas[int(st[:2], 16) - 1]
            target = synsets.get((t_pos, t_off))
            if target is None:
                continue
            tgt = target[0][int(st[2:], 16) - 1]
            if not (is_top(pos, off, src) and is_top(t_pos, t_off, tgt)) or src == tgt:
                continue
            pair = " ".join(sorted((src, tgt)))
            if sym == "+" and src[:5] != tgt[:5]:
                derived.add(pair)
            elif sym == "!":
                antonyms.add(pair)
                # Satellites of a head adjective share its antonym.
                if pos == "a":
                    for s_sym, s_off, s_pos, s_st in ptrs:
                        if s_sym != "&" or s_pos != "a":
                            continue
                        for sat in synsets[("a", s_off)][0]:
                            if is_top("a", s_off, sat) and sat != tgt:
                                antonyms.add(" ".join(sorted((sat, tgt))))
    out = sys.stdout
    for line in LICENSE.splitlines():
        out.write("# " + line + "\n")
    out.write("# Generated by scripts/wordnet-table.py from WordNet 3.0 (Debian wordnet-base); "
              f"top {TOP_SENSES} senses per lemma and part of speech.\n")
    for name, groups in (("synonyms", synonyms), ("derived", derived), ("antonyms", antonyms)):
        out.write(f"[{name}]\n")
        for g in sorted(groups):
            out.write(g + "\n")


main()
