import JSON

/// The course app's `courses.json`. Ids are derived from the names; fields the app does not
/// know are ignored, since the app's file is imported as it is.
enum CourseAppFormat {
    static func courses(_ elements: [JSONValue]) throws(JSONReadError) -> [Course] {
        var courseIDs: Set<String> = []
        var courses: [Course] = []
        for (index, element) in elements.enumerated() {
            var course = try JSONObjectReader(element, path: "$[\(index)]")
            let title = try course.text("course_name")
            let image = try course.optionalString("course_thumbnail")
            var lessonIDs: Set<String> = []
            var lessons: [Lesson] = []
            for video in try course.array("course_videos") {
                var reader = try JSONObjectReader(video.value, path: video.path)
                let lessonTitle = try reader.text("video_title")
                lessons.append(Lesson(
                    id: StableID.unique(StableID.slug(lessonTitle), taken: &lessonIDs), title: lessonTitle,
                    video: try reader.string("video_link", length: 1...4096), thumbnail: try reader.optionalString("video_thumbnail"),
                    duration: nil, explanation: nil))
            }
            courses.append(Course(
                id: StableID.unique(StableID.slug(title), taken: &courseIDs), title: title, category: nil, description: nil,
                image: image, time: nil, lessons: lessons, quiz: nil))
        }
        return courses
    }
}
