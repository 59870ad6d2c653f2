/*
 * wrk's Lua hooks for the rows whose requests differ (wrk -t1: one Lua state sends them all,
 * in order). Each rewrites the first value of `q` in the row's path, as bench-load's autocannon
 * path does for the same row.
 */

/** Every request gets `+<n>x<random>` on its query: a new key, a miss. */
export const UNIQUE_LUA = `
math.randomseed(os.time() + math.floor(os.clock() * 1000000))
counter = 0
request = function()
  counter = counter + 1
  local path = string.gsub(wrk.path, "q=([^&]*)", "q=%1+" .. counter .. "x" .. math.random(1, 1000000000))
  return wrk.format(nil, path)
end
`;

/**
 * The query mix (query-mix.ts): request i gets `+<salt>e<i / epoch length>r<rank i>`, the ranks
 * read from a file. Arguments after wrk's `--`: the ranks file, the salt, the epoch length.
 * wrk calls request() once before it sends anything, to check the script, and drops what it
 * returns: the count starts at -1 so that the first request sent is request 0.
 */
export const MIX_LUA = `
local ranks = {}
local salt = ""
local epochLength = 1
local i = -1
init = function(args)
  for line in io.lines(args[1]) do ranks[#ranks + 1] = line end
  salt = args[2]
  epochLength = tonumber(args[3])
end
request = function()
  local rank = ranks[(i % #ranks) + 1]
  local suffix = salt .. "e" .. math.floor(i / epochLength) .. "r" .. rank
  i = i + 1
  local path = string.gsub(wrk.path, "q=([^&]*)", "q=%1+" .. suffix)
  return wrk.format(nil, path)
end
`;
