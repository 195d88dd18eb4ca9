#ifndef CSQLITECONFIG_H
#define CSQLITECONFIG_H

#include <sqlite3.h>

/// Leaves the write-ahead log in place when `db`, the last connection to its file, closes, instead of
/// checkpointing it and deleting it (SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE). `sqlite3_db_config` is variadic,
/// which Swift cannot call. Answers 1 when the setting took, 0 when it did not (an SQLite before 3.28).
static inline int csqlite_keep_log_on_close(sqlite3 *db) {
    int set = 0;
    if (sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, &set) != SQLITE_OK) return 0;
    return set;
}

#endif
