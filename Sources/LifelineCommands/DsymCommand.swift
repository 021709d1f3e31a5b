import ArgumentParser
import Foundation
import LifelineModel
import LifelineStore

/// `lifeline dsym`: debug symbols for symbolicated crash frames.
struct DsymCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dsym",
        abstract: "Import and list debug symbols (dSYM) that name the functions, files and lines of crash frames.",
        subcommands: [DsymImportCommand.self, DsymListCommand.self]
    )
}

/// `lifeline dsym import`: offline import of `.dSYM` bundles or DWARF files.
struct DsymImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import .dSYM bundles (or Mach-O files with DWARF) into the database's symbol directory.",
        discussion: """
            Each architecture slice is recorded under its LC_UUID (thin and fat files) and copied to \
            <database>.symbols/<UUID>. Frames of that binary are symbolicated when read, crashes \
            stored before the import included. Importing the same UUID again changes nothing. \
            Needs llvm-symbolizer on PATH to symbolicate (the Swift toolchain and Debian's llvm ship it).
            """
    )

    @OptionGroup var global: GlobalOptions

    @Option(help: "Bundle identifier of the app the symbols belong to.")
    var app: String

    @Argument(help: "dSYM bundles, folders of them (an archive's dSYMs/), or DWARF / Mach-O files.")
    var paths: [String]

    func validate() throws {
        guard (1...255).contains(app.utf8.count) else { throw ValidationError("--app must be 1 to 255 bytes") }
        guard !paths.isEmpty else { throw ValidationError("give at least one path") }
    }

    func run() throws {
        let database = try Database(path: global.db)
        try database.migrate()
        var imported = 0
        var known = 0
        for path in paths {
            for file in try Database.symbolFiles(at: path) {
                for (symbols, isNew) in try database.importSymbols(app: app, file: file, now: WallClock.nowSeconds()) {
                    print("\(isNew ? "imported" : "known   ") \(symbols.uuid) \(symbols.arch) \(symbols.binaryName)")
                    if isNew { imported += 1 } else { known += 1 }
                }
            }
        }
        print("slices imported: \(imported), already known: \(known)")
        if database.symbolicator == nil {
            printError("note: llvm-symbolizer is not on PATH: frames stay unsymbolicated until it is")
        }
    }
}

/// `lifeline dsym list`.
struct DsymListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List the debug symbols of an app (uuid, arch, binary, size, imported at).")

    @OptionGroup var global: GlobalOptions

    @Option(help: "Bundle identifier of the app.")
    var app: String

    func run() throws {
        let database = try Database(path: global.db)
        try database.migrate()
        for symbols in try database.debugSymbols(app: app) {
            print(
                "\(symbols.uuid) \(symbols.arch) \(symbols.binaryName) \(symbols.size) B "
                    + UTCTimestamp.iso8601(symbols.uploadedAt))
        }
    }
}
