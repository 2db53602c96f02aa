internal import CSQLite
import Foundation

/// A failed SQLite call, with SQLite's own message.
struct SQLiteError: Error, CustomStringConvertible {
    var code: Int32
    var message: String
    var description: String { message }

    /// The database file is damaged or is not a database: rebuild it rather than trust it.
    var isCorruption: Bool {
        let primary = code & 0xFF
        return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB || primary == SQLITE_FORMAT
    }
}

/// One SQLite connection. A class rather than a struct: the connection is closed in `deinit`.
/// Used from one task at a time (SQLite's default serialized mode makes a hop between threads safe).
final class SQLiteDatabase {
    private let handle: OpaquePointer

    /// Opens (with `create`, creates) the database at `path`, never through a symbolic link.
    /// Read-only opens it as immutable: no lock, no `-shm` or `-wal` written (what `--check`
    /// promises); every writer checkpoints before it closes, so there is nothing in a WAL to miss.
    init(path: String, readOnly: Bool, create: Bool) throws(SQLiteError) {
        var flags = SQLITE_OPEN_NOFOLLOW | (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE)
        if create && !readOnly { flags |= SQLITE_OPEN_CREATE }
        var name = path
        if readOnly {
            flags |= SQLITE_OPEN_URI
            name =
                "file:"
                + String(
                    decoding: path.utf8.reduce(into: [UInt8]()) { bytes, byte in
                        if byte == UInt8(ascii: "%") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") || byte < 0x20 {
                            bytes += Array(String(format: "%%%02X", byte).utf8)
                        } else {
                            bytes.append(byte)
                        }
                    }, as: UTF8.self) + "?immutable=1"
        }
        var opened: OpaquePointer?
        let code = sqlite3_open_v2(name, &opened, flags, nil)
        guard code == SQLITE_OK, let opened else {
            let message = opened.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            if let opened { sqlite3_close_v2(opened) }
            throw SQLiteError(code: code, message: message)
        }
        handle = opened
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, 5000)
    }

    deinit {
        // A writer's last close checkpoints the WAL into the database and removes -wal and -shm.
        sqlite3_close_v2(handle)
    }

    /// Runs statements that return no rows.
    func execute(_ sql: String) throws(SQLiteError) {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        guard code == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(code))
            sqlite3_free(message)
            throw SQLiteError(code: code, message: text)
        }
    }

    /// A prepared statement.
    func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard code == SQLITE_OK, let statement else { throw error(code) }
        return SQLiteStatement(statement, database: self)
    }

    fileprivate func error(_ code: Int32) -> SQLiteError {
        SQLiteError(code: sqlite3_extended_errcode(handle), message: String(cString: sqlite3_errmsg(handle)))
    }
}

/// A prepared statement; `bind`, then `step` through its rows, then `reset` to run it again.
final class SQLiteStatement {
    private let statement: OpaquePointer
    private let database: SQLiteDatabase

    fileprivate init(_ statement: OpaquePointer, database: SQLiteDatabase) {
        self.statement = statement
        self.database = database
    }

    deinit {
        sqlite3_finalize(statement)
    }

    /// SQLite copies bound values at once (`SQLITE_TRANSIENT`).
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    func bind(_ index: Int32, _ value: Int) {
        sqlite3_bind_int64(statement, index, Int64(value))
    }

    func bind(_ index: Int32, _ value: String?) {
        guard let value else {
            sqlite3_bind_null(statement, index)
            return
        }
        sqlite3_bind_text(statement, index, value, -1, Self.transient)
    }

    func bind(_ index: Int32, _ value: [UInt8]) {
        _ = value.withUnsafeBytes { raw in
            // A zero-length blob still needs a non-null pointer to be a blob, not NULL.
            sqlite3_bind_blob(statement, index, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(raw.count), Self.transient)
        }
    }

    /// Advances to the next row: true while there is one.
    func step() throws(SQLiteError) -> Bool {
        let code = sqlite3_step(statement)
        if code == SQLITE_ROW { return true }
        if code == SQLITE_DONE { return false }
        throw database.error(code)
    }

    /// Runs a statement that returns no rows, then resets it.
    func run() throws(SQLiteError) {
        defer { reset() }
        _ = try step()
    }

    func reset() {
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
    }

    func int(_ column: Int32) -> Int { Int(sqlite3_column_int64(statement, column)) }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }

    func string(_ column: Int32) -> String? {
        guard let text = sqlite3_column_text(statement, column) else { return nil }
        return String(cString: text)
    }

    func bytes(_ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(statement, column))
        guard count > 0, let blob = sqlite3_column_blob(statement, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: blob, count: count))
    }
}
