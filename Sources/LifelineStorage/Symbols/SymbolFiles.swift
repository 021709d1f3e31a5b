import Foundation

/// Symbol files on disk, store-neutral: the DWARF files of a path (a file, a `.dSYM` bundle or a
/// folder of them) and zip archives of `.dSYM` bundles (see `SymbolArchive.swift`).
package enum SymbolFiles {
    /// The DWARF files of `path`: the file itself, or every file under `*.dSYM/Contents/Resources/DWARF/`
    /// of a directory (a `.dSYM` bundle, or a folder of them, as an Xcode archive's `dSYMs/`).
    package static func dwarfFiles(at path: String) throws(StoreError) -> [URL] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw StoreError(.invalid, "no file at \(path)")
        }
        let url = URL(fileURLWithPath: path)
        guard isDirectory.boolValue else { return [url] }
        var files: [URL] = []
        let walker = FileManager.default.enumerator(at: url, includingPropertiesForKeys: [.isRegularFileKey])
        while let item = walker?.nextObject() as? URL {
            let components = item.pathComponents
            guard components.count >= 3, components[components.count - 2] == "DWARF",
                components[components.count - 3] == "Resources",
                (try? item.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true
            else { continue }
            files.append(item)
        }
        guard !files.isEmpty else {
            throw StoreError(.invalid, "no DWARF file under \(path) (Contents/Resources/DWARF/)")
        }
        return files.sorted { $0.path < $1.path }
    }
}
