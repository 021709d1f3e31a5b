/// Telling the app's own binaries from Apple's, and normalizing text offsets.
///
/// A frame is a *system* frame when its `binaryName` is a known Apple library (exact names in
/// ``exactNames``, or any `lib….dylib`), or when its address lies in the dyld shared cache region
/// (≥ `0x1_8000_0000`, where arm64 iOS/macOS map every system library, while app images and their
/// embedded frameworks load just above the 4 GiB `__PAGEZERO`, around `0x1_0000_0000`). Everything
/// else — including third-party frameworks embedded in the app — counts as the app's own code.
enum SystemBinaries {
    /// Lowest address of the arm64 dyld shared cache.
    static let sharedCacheBase: UInt64 = 0x1_8000_0000

    /// Well-known Apple binaries that have no `lib` prefix.
    static let exactNames: Set<String> = [
        "dyld", "dyld_sim", "CoreFoundation", "Foundation", "UIKitCore", "UIKit", "SwiftUI", "SwiftUICore",
        "GraphicsServices", "FrontBoardServices", "BaseBoard", "BoardServices", "QuartzCore", "CoreGraphics",
        "CoreText", "AppKit", "HIToolbox", "CFNetwork", "Security", "CoreData", "WebKit", "WebCore",
        "JavaScriptCore", "Combine", "AttributeGraph", "RunningBoardServices", "UpdateCycle", "Metal",
        "AVFoundation", "AVFAudio", "MetricKit", "CoreLocation", "MapKit", "AudioToolbox", "CoreMedia", "IOKit",
        "ImageIO", "CoreImage", "StoreKit", "UserNotifications", "Network", "CoreServices", "LaunchServices",
        "AssertionServices", "SpringBoardServices", "CoreAudio", "MediaToolbox", "VideoToolbox", "Accelerate",
        "CoreML", "Vision", "CloudKit", "Photos", "PhotosUI", "SceneKit", "SpriteKit", "ARKit", "GameKit",
        "Contacts", "EventKit", "HealthKit", "CoreMotion", "CoreBluetooth", "CoreTelephony", "SafariServices",
        "AuthenticationServices", "LocalAuthentication", "IOSurface", "ColorSync", "CoreVideo", "OpenGLES",
        "CoreHaptics", "TextInput", "UIFoundation", "DocumentManager", "ExtensionFoundation", "ExtensionKit",
        "Observation", "SwiftData", "ManagedConfiguration", "CoreUI", "CoreAutoLayout", "AXCoreUtilities",
        "Accessibility", "CoreSymbolication", "Darwin", "Dispatch", "ObjectiveC",
    ]

    /// Whether a binary name is a known Apple library.
    static func isSystemName(_ name: String) -> Bool {
        if exactNames.contains(name) { return true }
        return name.hasPrefix("lib") && name.hasSuffix(".dylib")
    }
}
