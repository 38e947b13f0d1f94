"""Reading upstream texts: license files, names and expressions, README tops, vendor pages.

The engine's modules compile their patterns and load their tables when imported; what a night
asks of them before any text is read (is a stored reading current?) is answered here, without
importing them."""

# Bump when the license analysis changes what it reports: stored analyses of older engines are
# redone (crawler.analysis.licenses re-exports it).
ENGINE_VERSION = 4  # 2: variable regions take only names, years and holder lists (issue 13)
# 3: official variants of long texts (FSF revisions, http/https) are the license (issue 18)
# 4: short texts' official variants, title lines naming the software, whole-sentence quotes (32)
